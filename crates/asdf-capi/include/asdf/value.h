/*
 * asdf/value.h: the values of a file's tree (mappings, sequences, scalars) and the typed
 * reads of scalars, with libasdf's rules: a plain scalar is null, an integer (the smallest
 * type that holds it, unsigned when it is not negative), a bool, a float (as double) or else
 * a string; a quoted or block scalar is always a string; a YAML core tag is followed.
 *
 * A value returned to the caller is owned by the caller (asdf_value_destroy); asdf_mapping_t
 * and asdf_sequence_t are the same objects seen as containers (destroy one or the other).
 */
#ifndef ASDF_VALUE_H
#define ASDF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <asdf/util.h>
#include <asdf/yaml.h>

ASDF_BEGIN_DECLS

typedef struct asdf_value asdf_value_t;

typedef enum {
    ASDF_VALUE_UNKNOWN,
    ASDF_VALUE_SEQUENCE,
    ASDF_VALUE_MAPPING,
    ASDF_VALUE_SCALAR,
    ASDF_VALUE_STRING,
    ASDF_VALUE_BOOL,
    ASDF_VALUE_NULL,
    ASDF_VALUE_INT8,
    ASDF_VALUE_INT16,
    ASDF_VALUE_INT32,
    ASDF_VALUE_INT64,
    ASDF_VALUE_UINT8,
    ASDF_VALUE_UINT16,
    ASDF_VALUE_UINT32,
    ASDF_VALUE_UINT64,
    ASDF_VALUE_FLOAT,
    ASDF_VALUE_DOUBLE,
    ASDF_VALUE_EXTENSION
} asdf_value_type_t;

/* The result of a typed read or a change. */
typedef enum {
    ASDF_VALUE_ERR_UNKNOWN = -2,
    ASDF_VALUE_ERR_NOT_FOUND = -1,
    ASDF_VALUE_OK = 0,
    ASDF_VALUE_ERR_TYPE_MISMATCH,
    ASDF_VALUE_ERR_PARSE_FAILURE,
    ASDF_VALUE_ERR_EMIT_FAILURE,
    /* The value was given, cut to the type, but does not fit it. */
    ASDF_VALUE_ERR_OVERFLOW,
    ASDF_VALUE_ERR_OOM,
    ASDF_VALUE_ERR_READ_ONLY
} asdf_value_err_t;

typedef struct asdf_file asdf_file_t;

/* Frees a value (NULL is ignored). */
ASDF_EXPORT void asdf_value_destroy(asdf_value_t *value);
/* A new handle on the same node (its path kept). */
ASDF_EXPORT asdf_value_t *asdf_value_copy(asdf_value_t *value);
ASDF_EXPORT asdf_value_type_t asdf_value_get_type(asdf_value_t *value);
/* The JSON-pointer-like path from the root ("/a/0/b"; "" for a value not in a tree). */
ASDF_EXPORT const char *asdf_value_path(asdf_value_t *value);
/* The container holding the value (NULL at the root or outside a tree). */
ASDF_EXPORT asdf_value_t *asdf_value_parent(asdf_value_t *value);
ASDF_EXPORT const char *asdf_value_type_string(asdf_value_type_t type);
/* The node's tag, in full ("tag:stsci.edu:asdf/core/ndarray-1.1.0"), or NULL. */
ASDF_EXPORT const char *asdf_value_tag(asdf_value_t *value);
ASDF_EXPORT asdf_file_t *asdf_value_file(asdf_value_t *value);

/* Mappings */
typedef struct asdf_mapping asdf_mapping_t;

ASDF_EXPORT bool asdf_value_is_mapping(asdf_value_t *value);
ASDF_EXPORT int asdf_mapping_size(asdf_mapping_t *mapping);
ASDF_EXPORT asdf_value_err_t asdf_value_as_mapping(asdf_value_t *value, asdf_mapping_t **out);
ASDF_EXPORT asdf_value_t *asdf_value_of_mapping(asdf_mapping_t *mapping);
ASDF_EXPORT asdf_mapping_t *asdf_mapping_create(asdf_file_t *file);
ASDF_EXPORT void asdf_mapping_destroy(asdf_mapping_t *mapping);
/* The value under `key` (a new handle), or NULL. */
ASDF_EXPORT asdf_value_t *asdf_mapping_get(asdf_mapping_t *mapping, const char *key);

/* The entry an iterator is on: valid until the next step (copy the value to keep it). */
typedef struct {
    const char *key;
    asdf_value_t *value;
} asdf_mapping_iter_t;

ASDF_EXPORT asdf_mapping_iter_t *asdf_mapping_iter_init(asdf_mapping_t *mapping);
ASDF_EXPORT asdf_mapping_iter_t *asdf_mapping_reverse_iter_init(asdf_mapping_t *mapping);
/* Steps to the next entry; at the end frees the iterator, sets *iter to NULL and returns
 * false. */
ASDF_EXPORT bool asdf_mapping_iter_next(asdf_mapping_iter_t **iter);
ASDF_EXPORT void asdf_mapping_iter_destroy(asdf_mapping_iter_t *iter);


/* Changing mappings: a key set (replaced where it exists). The value given is consumed
 * (freed, whatever the outcome); containers too. */
typedef struct asdf_sequence asdf_sequence_t;
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set(asdf_mapping_t *mapping, const char *key, asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_mapping(asdf_mapping_t *mapping, const char *key, asdf_mapping_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_sequence(asdf_mapping_t *mapping, const char *key, asdf_sequence_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_string(asdf_mapping_t *mapping, const char *key, const char *str, size_t len);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_string0(asdf_mapping_t *mapping, const char *key, const char *str);
ASDF_EXPORT asdf_value_err_t asdf_mapping_set_null(asdf_mapping_t *mapping, const char *key);
ASDF_EXPORT asdf_value_err_t asdf_mapping_set_bool(asdf_mapping_t *mapping, const char *key, bool value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_int8(asdf_mapping_t *mapping, const char *key, int8_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_int16(asdf_mapping_t *mapping, const char *key, int16_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_int32(asdf_mapping_t *mapping, const char *key, int32_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_int64(asdf_mapping_t *mapping, const char *key, int64_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_uint8(asdf_mapping_t *mapping, const char *key, uint8_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_uint16(asdf_mapping_t *mapping, const char *key, uint16_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_uint32(asdf_mapping_t *mapping, const char *key, uint32_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_uint64(asdf_mapping_t *mapping, const char *key, uint64_t value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_float(asdf_mapping_t *mapping, const char *key, float value);
ASDF_EXPORT asdf_value_err_t
asdf_mapping_set_double(asdf_mapping_t *mapping, const char *key, double value);
/* Removes `key` and gives its value (the caller's), or NULL. */
ASDF_EXPORT asdf_value_t *asdf_mapping_pop(asdf_mapping_t *mapping, const char *key);

/* Sequences */

ASDF_EXPORT bool asdf_value_is_sequence(asdf_value_t *value);
ASDF_EXPORT int asdf_sequence_size(asdf_sequence_t *sequence);
/* The item at `index` (negative: from the end), a new handle, or NULL. */
ASDF_EXPORT asdf_value_t *asdf_sequence_get(asdf_sequence_t *sequence, int index);
ASDF_EXPORT asdf_value_err_t asdf_value_as_sequence(asdf_value_t *value, asdf_sequence_t **out);
ASDF_EXPORT asdf_value_t *asdf_value_of_sequence(asdf_sequence_t *sequence);
ASDF_EXPORT asdf_sequence_t *asdf_sequence_create(asdf_file_t *file);
ASDF_EXPORT void asdf_sequence_destroy(asdf_sequence_t *sequence);

typedef struct {
    asdf_value_t *value;
    int index;
} asdf_sequence_iter_t;

ASDF_EXPORT asdf_sequence_iter_t *asdf_sequence_iter_init(asdf_sequence_t *sequence);
ASDF_EXPORT asdf_sequence_iter_t *asdf_sequence_reverse_iter_init(asdf_sequence_t *sequence);
ASDF_EXPORT bool asdf_sequence_iter_next(asdf_sequence_iter_t **iter);
ASDF_EXPORT void asdf_sequence_iter_destroy(asdf_sequence_iter_t *iter);


/* Changing sequences: appended values are consumed (freed, whatever the outcome). */
ASDF_EXPORT asdf_value_err_t asdf_sequence_append(asdf_sequence_t *sequence, asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_sequence_append_mapping(asdf_sequence_t *sequence, asdf_mapping_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_sequence_append_sequence(asdf_sequence_t *sequence, asdf_sequence_t *value);
ASDF_EXPORT asdf_value_err_t
asdf_sequence_append_string(asdf_sequence_t *sequence, const char *str, size_t len);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_string0(asdf_sequence_t *sequence, const char *str);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_null(asdf_sequence_t *sequence);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_bool(asdf_sequence_t *sequence, bool value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_int8(asdf_sequence_t *sequence, int8_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_int16(asdf_sequence_t *sequence, int16_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_int32(asdf_sequence_t *sequence, int32_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_int64(asdf_sequence_t *sequence, int64_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_uint8(asdf_sequence_t *sequence, uint8_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_uint16(asdf_sequence_t *sequence, uint16_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_uint32(asdf_sequence_t *sequence, uint32_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_uint64(asdf_sequence_t *sequence, uint64_t value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_float(asdf_sequence_t *sequence, float value);
ASDF_EXPORT asdf_value_err_t asdf_sequence_append_double(asdf_sequence_t *sequence, double value);
/* Removes the item at `index` (negative from the end) and gives it (the caller's), or NULL. */
ASDF_EXPORT asdf_value_t *asdf_sequence_pop(asdf_sequence_t *sequence, int index);

/* Either kind of container */
typedef struct {
    /* The key (mappings) or NULL. */
    const char *key;
    /* The position (of the entry or item). */
    int index;
    asdf_value_t *value;
} asdf_container_iter_t;

ASDF_EXPORT asdf_container_iter_t *asdf_container_iter_init(asdf_value_t *container);
ASDF_EXPORT asdf_container_iter_t *asdf_container_reverse_iter_init(asdf_value_t *container);
ASDF_EXPORT bool asdf_container_iter_next(asdf_container_iter_t **iter);
ASDF_EXPORT void asdf_container_iter_destroy(asdf_container_iter_t *iter);
ASDF_EXPORT bool asdf_value_is_container(asdf_value_t *value);
/* The number of entries or items, or -1 for a value that is not a container. */
ASDF_EXPORT int asdf_container_size(asdf_value_t *container);

/* Scalars */
ASDF_EXPORT bool asdf_value_is_type(asdf_value_t *value, asdf_value_type_t type);
ASDF_EXPORT bool asdf_value_is_string(asdf_value_t *value);
/* The string's text (not NUL-terminated; `len` bytes), owned by the value. */
ASDF_EXPORT asdf_value_err_t
asdf_value_as_string(asdf_value_t *value, const char **out, size_t *len);
ASDF_EXPORT asdf_value_t *asdf_value_of_string(asdf_file_t *file, const char *value, size_t len);
/* The string's text, NUL-terminated, owned by the value. */
ASDF_EXPORT asdf_value_err_t asdf_value_as_string0(asdf_value_t *value, const char **out);
ASDF_EXPORT asdf_value_t *asdf_value_of_string0(asdf_file_t *file, const char *value);
ASDF_EXPORT bool asdf_value_is_scalar(asdf_value_t *value);
/* Any scalar's text as written, whatever its type. */
ASDF_EXPORT asdf_value_err_t
asdf_value_as_scalar(asdf_value_t *value, const char **out, size_t *len);
ASDF_EXPORT asdf_value_err_t asdf_value_as_scalar0(asdf_value_t *value, const char **out);
ASDF_EXPORT bool asdf_value_is_bool(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_bool(asdf_value_t *value, bool *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_bool(asdf_file_t *file, bool value);
ASDF_EXPORT bool asdf_value_is_null(asdf_value_t *value);
ASDF_EXPORT asdf_value_t *asdf_value_of_null(asdf_file_t *file);
ASDF_EXPORT bool asdf_value_is_int(asdf_value_t *value);
ASDF_EXPORT bool asdf_value_is_int8(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_int8(asdf_value_t *value, int8_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_int8(asdf_file_t *file, int8_t value);
ASDF_EXPORT bool asdf_value_is_int16(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_int16(asdf_value_t *value, int16_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_int16(asdf_file_t *file, int16_t value);
ASDF_EXPORT bool asdf_value_is_int32(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_int32(asdf_value_t *value, int32_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_int32(asdf_file_t *file, int32_t value);
ASDF_EXPORT bool asdf_value_is_int64(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_int64(asdf_value_t *value, int64_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_int64(asdf_file_t *file, int64_t value);
ASDF_EXPORT bool asdf_value_is_uint8(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_uint8(asdf_value_t *value, uint8_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_uint8(asdf_file_t *file, uint8_t value);
ASDF_EXPORT bool asdf_value_is_uint16(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_uint16(asdf_value_t *value, uint16_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_uint16(asdf_file_t *file, uint16_t value);
ASDF_EXPORT bool asdf_value_is_uint32(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_uint32(asdf_value_t *value, uint32_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_uint32(asdf_file_t *file, uint32_t value);
ASDF_EXPORT bool asdf_value_is_uint64(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_uint64(asdf_value_t *value, uint64_t *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_uint64(asdf_file_t *file, uint64_t value);
ASDF_EXPORT bool asdf_value_is_float(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_float(asdf_value_t *value, float *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_float(asdf_file_t *file, float value);
ASDF_EXPORT bool asdf_value_is_double(asdf_value_t *value);
ASDF_EXPORT asdf_value_err_t asdf_value_as_double(asdf_value_t *value, double *out);
ASDF_EXPORT asdf_value_t *asdf_value_of_double(asdf_file_t *file, double value);

/* The value read as `type` into `out`, a pointer to the type's C type (a new value handle
 * for ASDF_VALUE_UNKNOWN and the containers, a `const char *` for scalars and strings). */
ASDF_EXPORT asdf_value_err_t asdf_value_as_type(asdf_value_t *value, asdf_value_type_t type, void *out);

/* Finding values */

/* A predicate on a value (it must not keep the value). */
typedef bool (*asdf_value_pred_t)(asdf_value_t *value);

/* The value a find iterator is on: valid until the next step (copy it to keep it). */
typedef struct {
    asdf_value_t *value;
} asdf_find_iter_t;

/* The first value below `root` (breadth-first, `root` first) that `pred` accepts (NULL: any),
 * a new handle, or NULL. */
ASDF_EXPORT asdf_value_t *asdf_value_find(asdf_value_t *root, asdf_value_pred_t pred);

#define ASDF_DEPTH_FIRST true
#define ASDF_BREADTH_FIRST false

/* As asdf_value_find, depth-first or breadth-first, entering only the containers
 * `descend_pred` accepts (NULL: all), at most `max_depth` levels down (-1: no limit). */
ASDF_EXPORT asdf_value_t *asdf_value_find_ex(
    asdf_value_t *root,
    asdf_value_pred_t pred,
    bool depth_first,
    asdf_value_pred_t descend_pred,
    ssize_t max_depth);

static inline bool asdf_find_descend_mapping_only(asdf_value_t *value) {
    return asdf_value_is_mapping(value);
}

static inline bool asdf_find_descend_sequence_only(asdf_value_t *value) {
    return asdf_value_is_sequence(value);
}

#define asdf_find_descend_all ((asdf_value_pred_t)NULL)

/* An iterator over every value asdf_value_find would consider, in order; NULL when `root` is
 * not a container. */
ASDF_EXPORT asdf_find_iter_t *asdf_find_iter_init(asdf_value_t *root, asdf_value_pred_t pred);
ASDF_EXPORT asdf_find_iter_t *asdf_find_iter_init_ex(
    asdf_value_t *root,
    asdf_value_pred_t pred,
    bool depth_first,
    asdf_value_pred_t descend_pred,
    ssize_t max_depth);
/* Steps to the next value; at the end frees the iterator, sets *iter to NULL, returns false. */
ASDF_EXPORT bool asdf_value_find_iter_next(asdf_find_iter_t **iter);
ASDF_EXPORT void asdf_find_iter_destroy(asdf_find_iter_t *iter);

ASDF_END_DECLS

#endif /* ASDF_VALUE_H */
