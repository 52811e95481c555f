/* src/plot.h: placeholder, to be written. */
