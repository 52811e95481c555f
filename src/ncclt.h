/* src/ncclt.h: placeholder, to be written. */
