/* src/gpus.c: placeholder, to be written. */
