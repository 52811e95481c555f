/* model/fit.c: placeholder, to be written. */
