/* src/plot.c: placeholder, to be written. */
