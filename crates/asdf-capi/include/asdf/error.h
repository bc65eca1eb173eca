/*
 * asdf/error.h: the error codes, and the macros that record an error on a file or value.
 */
#ifndef ASDF_ERROR_H
#define ASDF_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <asdf/util.h>

ASDF_BEGIN_DECLS

/* What went wrong (asdf_error_code on the file). */
typedef enum {
    ASDF_ERR_NONE = 0,
    ASDF_ERR_UNKNOWN_STATE,
    ASDF_ERR_STREAM_INIT_FAILED,
    ASDF_ERR_STREAM_READ_ONLY,
    ASDF_ERR_INVALID_ASDF_HEADER,
    ASDF_ERR_UNEXPECTED_EOF,
    ASDF_ERR_INVALID_BLOCK_HEADER,
    ASDF_ERR_BLOCK_MAGIC_MISMATCH,
    ASDF_ERR_YAML_PARSER_INIT_FAILED,
    ASDF_ERR_YAML_PARSE_FAILED,
    ASDF_ERR_OUT_OF_MEMORY,
    /* An operating system error: asdf_error_errno has the errno. */
    ASDF_ERR_SYSTEM,
    /* With ASDF_ERROR_COMMON: (const char *argument name, const char *value). */
    ASDF_ERR_INVALID_ARGUMENT,
    /* With ASDF_ERROR_COMMON: (const char *compression). */
    ASDF_ERR_UNKNOWN_COMPRESSION,
    /* With ASDF_ERROR_COMMON: (const char *details). */
    ASDF_ERR_COMPRESSION_FAILED,
    /* With ASDF_ERROR_COMMON: (const char *tag). */
    ASDF_ERR_EXTENSION_NOT_FOUND,
    /* With ASDF_ERROR_COMMON: (const char *details). */
    ASDF_ERR_OVER_LIMIT
} asdf_error_code_t;

typedef struct asdf_file asdf_file_t;
typedef struct asdf_value asdf_value_t;

/* Records error `code` (with its arguments, see above) on a file or a value's file. */
/* clang-format off */
#define ASDF_ERROR_COMMON(obj, code, ...) _Generic((obj), \
    asdf_file_t *: asdf_file_error_common, \
    asdf_value_t *: asdf_value_error_common \
    )((obj), (code), __FILE__, __LINE__, ##__VA_ARGS__)

/* Records ASDF_ERR_OUT_OF_MEMORY. */
#define ASDF_ERROR_OOM(obj) _Generic((obj), \
    asdf_file_t *: asdf_file_error_oom, \
    asdf_value_t *: asdf_value_error_oom \
    )((obj), __FILE__, __LINE__)

/* Records ASDF_ERR_SYSTEM with an errno. */
#define ASDF_ERROR_SYSTEM(obj, errnum) _Generic((obj), \
    asdf_file_t *: asdf_file_error_system, \
    asdf_value_t *: asdf_value_error_system \
    )((obj), (errnum), __FILE__, __LINE__)
/* clang-format on */

/* Records an error with its finished message (NULL: the code's own message) and errno, on a
 * file or on a value's file (NULL: the calling thread's, as asdf_error(NULL) reads). */
ASDF_EXPORT void asdf_capi_file_error(asdf_file_t *file, int code, const char *message, int errnum);
ASDF_EXPORT void asdf_capi_value_error(
    asdf_value_t *value, int code, const char *message, int errnum);

/* The functions behind the macros above (call the macros). They are defined here, in the
 * header, because they are variadic: they format their arguments and record the message. (In
 * libasdf they are exported functions; a program built against libasdf's headers and linked
 * to this library without recompiling would not find them: recompile.) */
static inline const char *asdf__error_format(
    char *buf, size_t size, asdf_error_code_t code, va_list ap) {
    const char *a = NULL;
    const char *b = NULL;
    switch (code) {
    case ASDF_ERR_INVALID_ARGUMENT:
        a = va_arg(ap, const char *);
        b = va_arg(ap, const char *);
        snprintf(buf, size, "invalid argument for %s: %s", a ? a : "(null)", b ? b : "(null)");
        return buf;
    case ASDF_ERR_UNKNOWN_COMPRESSION:
        a = va_arg(ap, const char *);
        snprintf(buf, size, "unknown compression type: %s", a ? a : "(null)");
        return buf;
    case ASDF_ERR_COMPRESSION_FAILED:
        a = va_arg(ap, const char *);
        snprintf(buf, size, "compression error: %s", a ? a : "(null)");
        return buf;
    case ASDF_ERR_EXTENSION_NOT_FOUND:
        a = va_arg(ap, const char *);
        snprintf(buf, size, "no serializer registered for the %s extension", a ? a : "(null)");
        return buf;
    case ASDF_ERR_OVER_LIMIT:
        a = va_arg(ap, const char *);
        snprintf(buf, size, "over limit: %s", a ? a : "(null)");
        return buf;
    default:
        return NULL;
    }
}

static inline void asdf_file_error_common(
    asdf_file_t *file, asdf_error_code_t code, const char *src_file, int lineno, ...) {
    char buf[1024];
    va_list ap;
    (void)src_file;
    (void)lineno;
    va_start(ap, lineno);
    const char *message = asdf__error_format(buf, sizeof buf, code, ap);
    va_end(ap);
    asdf_capi_file_error(file, (int)code, message, 0);
}

static inline void asdf_value_error_common(
    asdf_value_t *value, asdf_error_code_t code, const char *src_file, int lineno, ...) {
    char buf[1024];
    va_list ap;
    (void)src_file;
    (void)lineno;
    va_start(ap, lineno);
    const char *message = asdf__error_format(buf, sizeof buf, code, ap);
    va_end(ap);
    asdf_capi_value_error(value, (int)code, message, 0);
}

ASDF_EXPORT void asdf_file_error_oom(asdf_file_t *file, const char *src_file, int lineno);
ASDF_EXPORT void asdf_value_error_oom(asdf_value_t *file, const char *src_file, int lineno);
ASDF_EXPORT void asdf_file_error_system(
    asdf_file_t *value, int errnum, const char *src_file, int lineno);
ASDF_EXPORT void asdf_value_error_system(
    asdf_value_t *value, int errnum, const char *src_file, int lineno);

ASDF_END_DECLS

#endif /* ASDF_ERROR_H */
