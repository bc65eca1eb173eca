/*
 * asdf/file.h: opening and closing ASDF files, their errors, and the values of their trees
 * read by path ("a/b/0/c": keys and sequence indices separated by '/', "" for the root).
 */
#ifndef ASDF_FILE_H
#define ASDF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <asdf/emitter.h>
#include <asdf/error.h>
#include <asdf/log.h>
#include <asdf/parser.h>
#include <asdf/util.h>
#include <asdf/value.h>

ASDF_BEGIN_DECLS

typedef struct asdf_file asdf_file_t;

/* How compressed blocks are decompressed (asdf-rs decompresses a block when it is first read,
 * whatever the mode; the options are accepted for compatibility). */
typedef enum {
    ASDF_BLOCK_DECOMP_MODE_AUTO = 0,
    ASDF_BLOCK_DECOMP_MODE_EAGER,
    ASDF_BLOCK_DECOMP_MODE_LAZY,
} asdf_block_decomp_mode_t;

/* Options of the _ex openers (laid out as libasdf's; zero for the defaults). */
typedef struct {
    asdf_parser_cfg_t parser;
    asdf_emitter_cfg_t emitter;
    asdf_log_cfg_t log;
    struct {
        asdf_block_decomp_mode_t mode;
        size_t max_memory_bytes;
        double max_memory_threshold;
        size_t chunk_size;
        const char *tmp_dir;
    } decomp;
} asdf_config_t;

typedef struct asdf_extension asdf_extension_t;

/* A block of the file. */
typedef struct asdf_block asdf_block_t;

/* The number of blocks. */
ASDF_EXPORT size_t asdf_block_count(asdf_file_t *file);

/* asdf_open(source[, arg]): a path (and a mode: "r", the default, or "w" for a new empty file
 * to write there), a FILE * (and a name for messages), or memory (and its size);
 * asdf_open(NULL) makes a new empty file. */
#define ASDF__PP_NARGS(...) ASDF__PP_NARGS_(__VA_ARGS__, 2, 1)
#define ASDF__PP_NARGS_(_1, _2, N, ...) N
#define ASDF__PP_CAT(a, b) ASDF__PP_CAT_(a, b)
#define ASDF__PP_CAT_(a, b) a##b

#define ASDF__OPEN_1(source) \
    _Generic( \
        (source), \
        FILE *: asdf_open_fp(source, NULL), \
        const char *: asdf_open_file(source, "r"), \
        char *: asdf_open_file(source, "r"), \
        void *: asdf_open_mem(NULL, 0))

#define ASDF__OPEN_2(source, ...) \
    _Generic( \
        (source), \
        FILE *: asdf_open_fp, \
        const char *: asdf_open_file, \
        char *: asdf_open_file, \
        const void *: asdf_open_mem)(source, __VA_ARGS__)

#define asdf_open(...) ASDF__PP_CAT(ASDF__OPEN_, ASDF__PP_NARGS(__VA_ARGS__))(__VA_ARGS__)

/* asdf_open with options (`config` may be NULL). */
#define asdf_open_ex(source, ...) \
    _Generic( \
        (source), \
        const char *: asdf_open_file_ex, \
        char *: asdf_open_file_ex, \
        FILE *: asdf_open_fp_ex, \
        void *: asdf_open_mem_ex)(source, __VA_ARGS__)

ASDF_EXPORT asdf_file_t *asdf_open_file_ex(
    const char *filename, const char *mode, asdf_config_t *config);
ASDF_EXPORT asdf_file_t *asdf_open_fp_ex(FILE *fp, const char *filename, asdf_config_t *config);
/* Memory (`buf` NULL and `size` 0: a new empty file); the memory must outlive the file. */
ASDF_EXPORT asdf_file_t *asdf_open_mem_ex(const void *buf, size_t size, asdf_config_t *config);

static inline asdf_file_t *asdf_open_file(const char *filename, const char *mode) {
    return asdf_open_file_ex(filename, mode, NULL);
}

static inline asdf_file_t *asdf_open_fp(FILE *fp, const char *filename) {
    return asdf_open_fp_ex(fp, filename, NULL);
}

static inline asdf_file_t *asdf_open_mem(const void *buf, size_t size) {
    return asdf_open_mem_ex(buf, size, NULL);
}

/* Closes a file and frees what it holds (NULL is ignored). */
ASDF_EXPORT void asdf_close(asdf_file_t *file);

/* The last error's message (NULL when there is none), its code and its errno. */
ASDF_EXPORT const char *asdf_error(asdf_file_t *file);
ASDF_EXPORT asdf_error_code_t asdf_error_code(asdf_file_t *file);
ASDF_EXPORT int asdf_error_errno(asdf_file_t *file);

/* The value at `path` (a new handle, asdf_value_destroy), or NULL. */
ASDF_EXPORT asdf_value_t *asdf_get_value(asdf_file_t *file, const char *path);
ASDF_EXPORT bool asdf_is_mapping(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t
asdf_get_mapping(asdf_file_t *file, const char *path, asdf_mapping_t **out);
ASDF_EXPORT bool asdf_is_sequence(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t
asdf_get_sequence(asdf_file_t *file, const char *path, asdf_sequence_t **out);
ASDF_EXPORT bool asdf_is_string(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t
asdf_get_string(asdf_file_t *file, const char *path, const char **out, size_t *out_len);
ASDF_EXPORT asdf_value_err_t
asdf_get_string0(asdf_file_t *file, const char *path, const char **out);
ASDF_EXPORT bool asdf_is_scalar(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t
asdf_get_scalar(asdf_file_t *file, const char *path, const char **out, size_t *out_len);
ASDF_EXPORT asdf_value_err_t
asdf_get_scalar0(asdf_file_t *file, const char *path, const char **out);
ASDF_EXPORT bool asdf_is_bool(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_bool(asdf_file_t *file, const char *path, bool *out);
ASDF_EXPORT bool asdf_is_null(asdf_file_t *file, const char *path);
ASDF_EXPORT bool asdf_is_int(asdf_file_t *file, const char *path);
ASDF_EXPORT bool asdf_is_int8(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_int8(asdf_file_t *file, const char *path, int8_t *out);
ASDF_EXPORT bool asdf_is_int16(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_int16(asdf_file_t *file, const char *path, int16_t *out);
ASDF_EXPORT bool asdf_is_int32(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_int32(asdf_file_t *file, const char *path, int32_t *out);
ASDF_EXPORT bool asdf_is_int64(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_int64(asdf_file_t *file, const char *path, int64_t *out);
ASDF_EXPORT bool asdf_is_uint8(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_uint8(asdf_file_t *file, const char *path, uint8_t *out);
ASDF_EXPORT bool asdf_is_uint16(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_uint16(asdf_file_t *file, const char *path, uint16_t *out);
ASDF_EXPORT bool asdf_is_uint32(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_uint32(asdf_file_t *file, const char *path, uint32_t *out);
ASDF_EXPORT bool asdf_is_uint64(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_uint64(asdf_file_t *file, const char *path, uint64_t *out);
ASDF_EXPORT bool asdf_is_float(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_float(asdf_file_t *file, const char *path, float *out);
ASDF_EXPORT bool asdf_is_double(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_get_double(asdf_file_t *file, const char *path, double *out);
#define asdf_get_int asdf_get_int64

/* Writing: 0 on success, -1 with the file's error set. */
ASDF_EXPORT int asdf_write_to_file(asdf_file_t *file, const char *filename);
ASDF_EXPORT int asdf_write_to_fp(asdf_file_t *file, FILE *fp);
/* Into memory: *buf from malloc (free it with free), *size its length. */
ASDF_EXPORT int asdf_write_to_mem(asdf_file_t *file, void **buf, size_t *size);

/* asdf_write_to(file, filename or FILE *) or asdf_write_to(file, &buf, &size). */
#define ASDF__WRITE_TO_1(source, dest) \
    _Generic( \
        (dest), \
        const char *: asdf_write_to_file, \
        char *: asdf_write_to_file, \
        FILE *: asdf_write_to_fp)(source, dest)
#define ASDF__WRITE_TO_2(source, dest, ...) asdf_write_to_mem(source, dest, __VA_ARGS__)
#define asdf_write_to(file, ...) \
    ASDF__PP_CAT(ASDF__WRITE_TO_, ASDF__PP_NARGS(__VA_ARGS__))(file, __VA_ARGS__)

/* Changing the tree by path: the value is consumed (freed, whatever the outcome); mappings
 * on the way are made where missing. */
ASDF_EXPORT asdf_value_err_t
asdf_set_value(asdf_file_t *file, const char *path, asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_set_string(asdf_file_t *file, const char *path, const char *str, size_t len);
ASDF_EXPORT asdf_value_err_t asdf_set_string0(asdf_file_t *file, const char *path, const char *str);
ASDF_EXPORT asdf_value_err_t asdf_set_bool(asdf_file_t *file, const char *path, bool val);
ASDF_EXPORT asdf_value_err_t asdf_set_null(asdf_file_t *file, const char *path);
ASDF_EXPORT asdf_value_err_t asdf_set_int8(asdf_file_t *file, const char *path, int8_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_int16(asdf_file_t *file, const char *path, int16_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_int32(asdf_file_t *file, const char *path, int32_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_int64(asdf_file_t *file, const char *path, int64_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_uint8(asdf_file_t *file, const char *path, uint8_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_uint16(asdf_file_t *file, const char *path, uint16_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_uint32(asdf_file_t *file, const char *path, uint32_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_uint64(asdf_file_t *file, const char *path, uint64_t val);
ASDF_EXPORT asdf_value_err_t asdf_set_float(asdf_file_t *file, const char *path, float val);
ASDF_EXPORT asdf_value_err_t asdf_set_double(asdf_file_t *file, const char *path, double val);
ASDF_EXPORT asdf_value_err_t
asdf_set_mapping(asdf_file_t *file, const char *path, asdf_mapping_t *mapping);
ASDF_EXPORT asdf_value_err_t
asdf_set_sequence(asdf_file_t *file, const char *path, asdf_sequence_t *sequence);

ASDF_END_DECLS

#endif /* ASDF_FILE_H */
