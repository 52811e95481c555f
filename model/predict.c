/* model/predict.c: placeholder, to be written. */
