/* model/sim.c: placeholder, to be written. */
