/* src/modeldesc.c: placeholder, to be written. */
