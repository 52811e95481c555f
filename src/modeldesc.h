/* src/modeldesc.h: placeholder, to be written. */
