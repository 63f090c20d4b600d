/*
 * hd.h: EV_HD, the marker of a function that one definition serves on the
 * host and on the device: __host__ __device__ under nvcc, nothing under a
 * C compiler.  Such functions are static inline in their headers (the
 * device needs their bodies in its translation unit: the kernels are built
 * without relocatable device code); kernels/oracle.h's bound and
 * kernels/plants.h use it.
 */
#ifndef EV_HD_H
#define EV_HD_H

#ifdef __CUDACC__
#define EV_HD __host__ __device__
#else
#define EV_HD
#endif

#endif
