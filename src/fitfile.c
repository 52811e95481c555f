/* src/fitfile.c: placeholder, to be written. */
