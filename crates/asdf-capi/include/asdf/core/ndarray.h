/*
 * asdf/core/ndarray.h: core/ndarray as asdf_ndarray_t (laid out as libasdf's), and reading
 * its data: whole, by element, by tile, converted to another type where asked.
 */
#ifndef ASDF_CORE_NDARRAY_H
#define ASDF_CORE_NDARRAY_H

#include <stddef.h>
#include <stdint.h>

#include <asdf/core/datatype.h>
#include <asdf/emitter.h>
#include <asdf/extension.h>
#include <asdf/util.h>

ASDF_BEGIN_DECLS

#define ASDF_CORE_NDARRAY_TAG ASDF_CORE_TAG_PREFIX "ndarray-1.1.0"

typedef enum {
    ASDF_NDARRAY_OK = 0,
    ASDF_NDARRAY_ERR_OUT_OF_BOUNDS,
    ASDF_NDARRAY_ERR_OOM,
    ASDF_NDARRAY_ERR_INVAL,
    ASDF_NDARRAY_ERR_OVERFLOW,
    ASDF_NDARRAY_ERR_CONVERSION,
} asdf_ndarray_err_t;

/* An ndarray: its block, shape, datatype, byte order, offset and strides (NULL: C order). */
typedef struct {
    size_t source;
    uint32_t ndim;
    const uint64_t *shape;
    asdf_datatype_t datatype;
    asdf_byteorder_t byteorder;
    uint64_t offset;
    const int64_t *strides;
    void *_reserved;
} asdf_ndarray_t;

ASDF_DECLARE_EXTENSION(ndarray, asdf_ndarray_t);

/* The array's bytes as stored (decoded from its compression), kept by the array; `size` gets
 * their length. */
ASDF_EXPORT const void *asdf_ndarray_data(asdf_ndarray_t *ndarray, size_t *size);
ASDF_EXPORT const void *asdf_ndarray_data_raw(asdf_ndarray_t *ndarray, size_t *size);
/* The number of elements, and of bytes. */
ASDF_EXPORT uint64_t asdf_ndarray_size(const asdf_ndarray_t *ndarray);
ASDF_EXPORT uint64_t asdf_ndarray_nbytes(const asdf_ndarray_t *ndarray);
ASDF_EXPORT void *asdf_ndarray_data_alloc(asdf_ndarray_t *ndarray);
ASDF_EXPORT void *asdf_ndarray_data_alloc_temp(asdf_file_t *file, asdf_ndarray_t *ndarray);
ASDF_EXPORT void asdf_ndarray_data_dealloc(asdf_ndarray_t *ndarray);
ASDF_EXPORT int asdf_ndarray_compression_set(asdf_ndarray_t *ndarray, const char *compression);
ASDF_EXPORT asdf_array_storage_t asdf_ndarray_storage(asdf_ndarray_t *ndarray);
ASDF_EXPORT void asdf_ndarray_storage_set(asdf_ndarray_t *ndarray, asdf_array_storage_t storage);
ASDF_EXPORT asdf_block_t *asdf_ndarray_block(asdf_ndarray_t *ndarray);

/* Every element, converted to `dst_t` (ASDF_DATATYPE_SOURCE: as stored, in the machine's byte
 * order), into *dst (allocated with malloc when *dst is NULL; the caller frees it). */
ASDF_EXPORT asdf_ndarray_err_t
asdf_ndarray_read_all(asdf_ndarray_t *ndarray, asdf_scalar_datatype_t dst_t, void **dst);
/* The box at `origin` of `shape`, as asdf_ndarray_read_all. */
ASDF_EXPORT asdf_ndarray_err_t asdf_ndarray_read_tile_ndim(
    asdf_ndarray_t *ndarray,
    const uint64_t *origin,
    const uint64_t *shape,
    asdf_scalar_datatype_t dst_t,
    void **dst);
/* A width x height tile at (x, y) of the plane at `plane_origin` (the leading indices). */
ASDF_EXPORT asdf_ndarray_err_t asdf_ndarray_read_tile_2d(
    asdf_ndarray_t *ndarray,
    uint64_t x,
    uint64_t y,
    uint64_t width,
    uint64_t height,
    const uint64_t *plane_origin,
    asdf_scalar_datatype_t dst_t,
    void **dst);

/* One element, converted to `dst_t`, into *dst. */
ASDF_EXPORT asdf_ndarray_err_t asdf_ndarray_read_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_scalar_datatype_t dst_t, void *dst);
ASDF_EXPORT int8_t asdf_ndarray_read_int8_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT uint8_t asdf_ndarray_read_uint8_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT int16_t asdf_ndarray_read_int16_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT uint16_t asdf_ndarray_read_uint16_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT int32_t asdf_ndarray_read_int32_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT uint32_t asdf_ndarray_read_uint32_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT int64_t asdf_ndarray_read_int64_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT uint64_t asdf_ndarray_read_uint64_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
#ifdef ASDF_HAVE_FLOAT16
ASDF_EXPORT _Float16 asdf_ndarray_read_float16_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
#endif
ASDF_EXPORT float asdf_ndarray_read_float32_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);
ASDF_EXPORT double asdf_ndarray_read_float64_at(
    asdf_ndarray_t *ndarray, const uint64_t *indices, asdf_ndarray_err_t *err);

#ifndef __cplusplus
#ifdef ASDF_HAVE_FLOAT16
#define ASDF__READ_AT_FLOAT16 _Float16 : asdf_ndarray_read_float16_at,
#else
#define ASDF__READ_AT_FLOAT16
#endif

#define ASDF__READ_AT_FN(type) \
    _Generic( \
        ((type){0}), \
        ASDF__READ_AT_FLOAT16 \
        int8_t: asdf_ndarray_read_int8_at, \
        uint8_t: asdf_ndarray_read_uint8_at, \
        int16_t: asdf_ndarray_read_int16_at, \
        uint16_t: asdf_ndarray_read_uint16_at, \
        int32_t: asdf_ndarray_read_int32_at, \
        uint32_t: asdf_ndarray_read_uint32_at, \
        int64_t: asdf_ndarray_read_int64_at, \
        uint64_t: asdf_ndarray_read_uint64_at, \
        float: asdf_ndarray_read_float32_at, \
        double: asdf_ndarray_read_float64_at)

#define ASDF__INDICES(...) ((const uint64_t[]){__VA_ARGS__})
#define ASDF__NINDICES(...) (sizeof(ASDF__INDICES(__VA_ARGS__)) / sizeof(uint64_t))
#define ASDF__AT_INDICES(ndarray, ...) \
    (ASDF__NINDICES(__VA_ARGS__) == (ndarray)->ndim ? ASDF__INDICES(__VA_ARGS__) : NULL)

/* asdf_ndarray_at(a, double, i, j): the element at (i, j) as a double (NULL indices, an error,
 * when their number is not the array's). */
#define asdf_ndarray_at(ndarray, type, ...) \
    ASDF__READ_AT_FN(type)((ndarray), ASDF__AT_INDICES((ndarray), __VA_ARGS__), NULL)
#define asdf_ndarray_at_err(ndarray, type, err, ...) \
    ASDF__READ_AT_FN(type)((ndarray), ASDF__AT_INDICES((ndarray), __VA_ARGS__), (err))
#endif /* __cplusplus */

ASDF_END_DECLS

#endif /* ASDF_CORE_NDARRAY_H */
