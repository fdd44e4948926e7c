/* bench_phold: the sequential engine (phold.c) and the parallel one (phold_pdes.c). */
#ifndef FABSIM_BENCH_PHOLD_H
#define FABSIM_BENCH_PHOLD_H
/* `bench_phold --engine pdes ...`: argv as given to main. */
int phold_pdes_main(int argc, char **argv);
#endif
