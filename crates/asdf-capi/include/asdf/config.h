/*
 * asdf/config.h: how this build of the asdf-rs C API was configured (included by asdf/util.h).
 */
#ifndef ASDF_CONFIG_H
#define ASDF_CONFIG_H

/* The library's own log statements: none are compiled in (ASDF_LOG expands to nothing). */
/* #undef ASDF_LOG_ENABLED */

/* The runtime log level used when none is configured. */
#define ASDF_LOG_DEFAULT_LEVEL ASDF_LOG_WARN

/* The lowest log level compiled in. */
#define ASDF_LOG_MIN_LEVEL ASDF_LOG_TRACE

/* 1 where the compiler has _Float16 (the float16 entry points are then declared). */
#if defined(__FLT16_MAX__) && !defined(__cplusplus)
#define ASDF_HAVE_FLOAT16 1
#endif

/* This is asdf-rs behind libasdf's names: programs may test for it. */
#define ASDF_RS 1

#endif /* ASDF_CONFIG_H */
