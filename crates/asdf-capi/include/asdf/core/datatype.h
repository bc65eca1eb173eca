/*
 * asdf/core/datatype.h: ndarray datatypes (core/ndarray's `datatype`): the scalar types, byte
 * orders and structured types.
 */
#ifndef ASDF_CORE_DATATYPE_H
#define ASDF_CORE_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#include <asdf/core/asdf.h>
#include <asdf/extension.h>

ASDF_BEGIN_DECLS

#define ASDF_CORE_DATATYPE_TAG ASDF_CORE_TAG_PREFIX "datatype-1.0.0"

typedef enum {
    ASDF_DATATYPE_UNKNOWN = 0,
    ASDF_DATATYPE_INT8,
    ASDF_DATATYPE_UINT8,
    ASDF_DATATYPE_INT16,
    ASDF_DATATYPE_UINT16,
    ASDF_DATATYPE_INT32,
    ASDF_DATATYPE_UINT32,
    ASDF_DATATYPE_INT64,
    ASDF_DATATYPE_UINT64,
    ASDF_DATATYPE_FLOAT16,
    ASDF_DATATYPE_FLOAT32,
    ASDF_DATATYPE_FLOAT64,
    ASDF_DATATYPE_COMPLEX64,
    ASDF_DATATYPE_COMPLEX128,
    ASDF_DATATYPE_BOOL8,
    ASDF_DATATYPE_ASCII,
    ASDF_DATATYPE_UCS4,
    ASDF_DATATYPE_STRUCTURED
} asdf_scalar_datatype_t;

/* As a destination type of a read: the array's own type, unconverted. */
#define ASDF_DATATYPE_SOURCE ASDF_DATATYPE_UNKNOWN

typedef enum {
    ASDF_BYTEORDER_INVALID = -1,
    ASDF_BYTEORDER_DEFAULT = 0,
    ASDF_BYTEORDER_BIG = '>',
    ASDF_BYTEORDER_LITTLE = '<'
} asdf_byteorder_t;

typedef struct asdf_datatype asdf_datatype_t;

/* A datatype: a scalar type (its size; for strings, their length in bytes), or a structured
 * one (its fields); `name` for a field; `shape` for a field that is a subarray. */
struct asdf_datatype {
    asdf_scalar_datatype_t type;
    uint64_t size;
    const char *name;
    asdf_byteorder_t byteorder;
    uint32_t ndim;
    const uint64_t *shape;
    uint32_t nfields;
    const asdf_datatype_t *fields;
};

ASDF_DECLARE_EXTENSION(datatype, asdf_datatype_t);

/* "int8" ... "float64", "complex128", "bool8" to the type (ASDF_DATATYPE_UNKNOWN otherwise). */
ASDF_EXPORT asdf_scalar_datatype_t asdf_scalar_datatype_from_string(const char *dtype);
ASDF_EXPORT const char *asdf_scalar_datatype_to_string(asdf_scalar_datatype_t datatype);
/* The size in bytes of an element of the datatype. */
ASDF_EXPORT uint64_t asdf_datatype_size(asdf_datatype_t *datatype);

/* The size in bytes of a scalar type (0 for strings, structured and unknown). */
static inline size_t asdf_scalar_datatype_size(asdf_scalar_datatype_t type) {
    switch (type) {
    case ASDF_DATATYPE_INT8:
    case ASDF_DATATYPE_UINT8:
    case ASDF_DATATYPE_BOOL8:
        return 1;
    case ASDF_DATATYPE_INT16:
    case ASDF_DATATYPE_UINT16:
    case ASDF_DATATYPE_FLOAT16:
        return 2;
    case ASDF_DATATYPE_INT32:
    case ASDF_DATATYPE_UINT32:
    case ASDF_DATATYPE_FLOAT32:
        return 4;
    case ASDF_DATATYPE_INT64:
    case ASDF_DATATYPE_UINT64:
    case ASDF_DATATYPE_FLOAT64:
    case ASDF_DATATYPE_COMPLEX64:
        return 8;
    case ASDF_DATATYPE_COMPLEX128:
        return 16;
    default:
        return 0;
    }
}

ASDF_END_DECLS

#endif /* ASDF_CORE_DATATYPE_H */
