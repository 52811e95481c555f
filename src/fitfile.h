/* src/fitfile.h: placeholder, to be written. */
