/* model/predict.h: placeholder, to be written. */
