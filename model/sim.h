/* model/sim.h: placeholder, to be written. */
