/* src/ncclt.c: placeholder, to be written. */
