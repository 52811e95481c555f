/* src/table.c: placeholder, to be written. */
