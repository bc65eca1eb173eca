/*
 * asdf/log.h: log levels and the logging configuration of asdf_config_t.
 */
#ifndef ASDF_LOG_H
#define ASDF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <asdf/util.h>

typedef enum {
    ASDF_LOG_NONE = 0,
    ASDF_LOG_TRACE,
    ASDF_LOG_DEBUG,
    ASDF_LOG_INFO,
    ASDF_LOG_WARN,
    ASDF_LOG_ERROR,
    ASDF_LOG_FATAL,
} asdf_log_level_t;

#define ASDF_LOG_NUM_LEVELS (ASDF_LOG_FATAL + 1)

/* The parts of a log line, as bits of asdf_log_fields_t. */
#define ASDF_LOG_FIELDS(X) \
    X(ASDF_LOG_FIELD_LEVEL, 0) \
    X(ASDF_LOG_FIELD_PACKAGE, 1) \
    X(ASDF_LOG_FIELD_FILE, 2) \
    X(ASDF_LOG_FIELD_LINE, 3) \
    X(ASDF_LOG_FIELD_MSG, 4)

#define ASDF_LOG_FIELD_ALL \
    (ASDF_LOG_FIELD_LEVEL | ASDF_LOG_FIELD_PACKAGE | ASDF_LOG_FIELD_FILE | ASDF_LOG_FIELD_LINE | \
     ASDF_LOG_FIELD_MSG)

typedef enum {
#define X(flag, bit) flag = (1UL << (bit)),
    ASDF_LOG_FIELDS(X)
#undef X
} asdf_log_field_t;

typedef uint64_t asdf_log_fields_t;

/* Where and what to log (stream NULL: stderr). */
typedef struct {
    FILE *stream;
    asdf_log_level_t level;
    asdf_log_fields_t fields;
    bool no_color;
} asdf_log_cfg_t;

typedef struct asdf_file asdf_file_t;

ASDF_BEGIN_DECLS

/* Writes a printf-style message at `level` to stderr, from ASDF_LOG_WARN up (defined in the
 * header: it is variadic). */
static inline void asdf_file_log(
    const asdf_file_t *file,
    asdf_log_level_t level,
    const char *src_file,
    int lineno,
    const char *fmt,
    ...) {
    static const char *const names[] = {"NONE", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    va_list ap;
    (void)file;
    if (level < ASDF_LOG_WARN || level > ASDF_LOG_FATAL || !fmt)
        return;
    fprintf(stderr, "[asdf] %s %s:%d: ", names[level], src_file ? src_file : "?", lineno);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#ifdef ASDF_LOG_ENABLED
#define ASDF_LOG(file, level, ...) asdf_file_log((file), (level), __FILE__, __LINE__, __VA_ARGS__)
#else
#define ASDF_LOG(file, level, ...) ((void)0)
#endif

ASDF_END_DECLS

#endif /* ASDF_LOG_H */
