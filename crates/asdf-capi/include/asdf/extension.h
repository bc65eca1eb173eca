/*
 * asdf/extension.h: tags, software records, and extensions: C types read from and written to
 * tagged nodes through a table of functions (serialize, deserialize, copy, deinit). The core
 * types (ndarray, software, history entries, time, extension metadata) are extensions too;
 * a program registers its own with ASDF_REGISTER_EXTENSION.
 */
#ifndef ASDF_EXTENSION_H
#define ASDF_EXTENSION_H

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <asdf/error.h>
#include <asdf/file.h>
#include <asdf/util.h>
#include <asdf/value.h>
#include <asdf/version.h>

ASDF_BEGIN_DECLS

/* A tag split into its name and version ("tag:stsci.edu:asdf/core/ndarray" and "1.1.0"). */
typedef struct {
    const char *name;
    const asdf_version_t *version;
} asdf_tag_t;

/* A piece of software (core/software-1.0.0): name and version required. */
typedef struct {
    const char *name;
    const asdf_version_t *version;
    const char *author;
    const char *homepage;
} asdf_software_t;

/* An extension's functions. serialize: the object as a new value (or NULL); deserialize: a
 * value as a new object in *out; copy: a deep copy into `dst`; deinit: frees what an object
 * holds (not the object). */
typedef asdf_value_t *(*asdf_extension_serialize_t)(
    asdf_file_t *file, const void *obj, const void *userdata);
typedef asdf_value_err_t (*asdf_extension_deserialize_t)(
    asdf_value_t *value, const void *userdata, void **out);
typedef bool (*asdf_extension_copy_t)(asdf_file_t *file, const void *src, void *dst);
typedef void (*asdf_extension_deinit_t)(void *obj);
typedef void (*asdf_extension_method_t)(void);

#define ASDF_EXTENSION_VTAB_MAX_METHODS 8
#define ASDF_EXTENSION_VTAB_METHODS 4

/* Laid out as libasdf's: four functions, then room for more. */
typedef struct {
    asdf_extension_serialize_t serialize;
    asdf_extension_deserialize_t deserialize;
    asdf_extension_copy_t copy;
    asdf_extension_deinit_t deinit;
    asdf_extension_method_t
        _reserved[ASDF_EXTENSION_VTAB_MAX_METHODS - ASDF_EXTENSION_VTAB_METHODS];
} asdf_extension_vtab_t;

#ifndef __cplusplus
ASDF_STATIC_ASSERT(
    sizeof(asdf_extension_vtab_t) ==
        ASDF_EXTENSION_VTAB_MAX_METHODS * sizeof(asdf_extension_method_t),
    "asdf_extension_vtab_t is ASDF_EXTENSION_VTAB_MAX_METHODS functions wide");
#endif

/* An extension: the tags it reads (NULL-terminated; the first is the one it writes), the
 * software that provides it, its functions, the size of its C type, and data for them. */
struct asdf_extension {
    const char *const *tags;
    asdf_software_t *software;
    const asdf_extension_vtab_t *vtab;
    size_t size;
    void *userdata;
};

typedef struct asdf_extension asdf_extension_t;

/* Registers an extension for every file (ASDF_REGISTER_EXTENSION does it at start-up). */
ASDF_EXPORT void asdf_extension_register(asdf_extension_t *ext);
/* The extension registered for `tag` (its name; any version), or NULL. */
ASDF_EXPORT const asdf_extension_t *asdf_extension_get(asdf_file_t *file, const char *tag);

/* Values of an extension's type. */
ASDF_EXPORT bool asdf_value_is_extension_type(asdf_value_t *value, const asdf_extension_t *ext);
ASDF_EXPORT asdf_value_err_t
asdf_value_as_extension_type(asdf_value_t *value, const asdf_extension_t *ext, void **out);
ASDF_EXPORT asdf_value_t *asdf_value_of_extension_type(
    asdf_file_t *file, const void *obj, const asdf_extension_t *ext);
ASDF_EXPORT bool asdf_is_extension_type(asdf_file_t *file, const char *path, asdf_extension_t *ext);
ASDF_EXPORT asdf_value_err_t
asdf_get_extension_type(asdf_file_t *file, const char *path, asdf_extension_t *ext, void **out);
ASDF_EXPORT asdf_value_err_t asdf_set_extension_type(
    asdf_file_t *file, const char *path, const void *obj, asdf_extension_t *ext);

/* Parses a tag; a tag without a version gets a NULL version. NULL for NULL. Free with
 * asdf_tag_destroy. */
ASDF_EXPORT asdf_tag_t *asdf_tag_parse(const char *tag);
/* Frees a tag (NULL is ignored). */
ASDF_EXPORT void asdf_tag_destroy(asdf_tag_t *tag);

/* Defining an extension: ASDF_REGISTER_EXTENSION(name, type, software, vtab, userdata,
 * tags...) in one .c file defines it, registers it at start-up, and defines the functions
 * ASDF_DECLARE_EXTENSION(name, type) declares in a header. */
#define ASDF_EXT_PREFIX asdf
#define ASDF_PASTE(a, b) a##b
#define ASDF_EXPAND(a, b) ASDF_PASTE(a, b)
#define ASDF_EXT_STATIC_NAME(extname) ASDF_EXPAND(ASDF_EXT_PREFIX, _##extname##_extension)
#define ASDF_EXT_TAGS_NAME(extname) ASDF_EXPAND(ASDF_EXT_PREFIX, _##extname##_extension_tags)

#define ASDF_EXT_DEFINE(extname, type, _software, _vtab, _userdata, ...) \
    static const char *const ASDF_EXT_TAGS_NAME(extname)[] = {__VA_ARGS__, NULL}; \
    static asdf_extension_t ASDF_EXT_STATIC_NAME(extname) = { \
        .tags = ASDF_EXT_TAGS_NAME(extname), \
        .software = (_software), \
        .vtab = (_vtab), \
        .size = sizeof(type), \
        .userdata = (_userdata)}

#define ASDF_EXT_DEFINE_VALUE_IS_TYPE(extname) \
    ASDF_EXPORT bool asdf_value_is_##extname(asdf_value_t *value) { \
        return asdf_value_is_extension_type(value, &ASDF_EXT_STATIC_NAME(extname)); \
    }

#define ASDF_EXT_DEFINE_VALUE_AS_TYPE(extname, type) \
    ASDF_EXPORT asdf_value_err_t asdf_value_as_##extname(asdf_value_t *value, type **out) { \
        return asdf_value_as_extension_type(value, &ASDF_EXT_STATIC_NAME(extname), (void **)out); \
    }

#define ASDF_EXT_DEFINE_IS_TYPE(extname, type) \
    ASDF_EXPORT bool asdf_is_##extname(asdf_file_t *file, const char *path) { \
        return asdf_is_extension_type(file, path, &ASDF_EXT_STATIC_NAME(extname)); \
    }

#define ASDF_EXT_DEFINE_VALUE_OF_TYPE(extname, type) \
    ASDF_EXPORT asdf_value_t *asdf_value_of_##extname(asdf_file_t *file, const type *obj) { \
        return asdf_value_of_extension_type(file, obj, &ASDF_EXT_STATIC_NAME(extname)); \
    }

#define ASDF_EXT_DEFINE_GET(extname, type) \
    ASDF_EXPORT asdf_value_err_t asdf_get_##extname( \
        asdf_file_t *file, const char *path, type **out) { \
        return asdf_get_extension_type(file, path, &ASDF_EXT_STATIC_NAME(extname), (void **)out); \
    }

#define ASDF_EXT_DEFINE_SET(extname, type) \
    ASDF_EXPORT asdf_value_err_t asdf_set_##extname( \
        asdf_file_t *file, const char *path, const type *obj) { \
        return asdf_set_extension_type( \
            file, path, (const void *)obj, &ASDF_EXT_STATIC_NAME(extname)); \
    }

#define ASDF_EXT_DEFINE_DEINIT(extname, type) \
    ASDF_EXPORT void asdf_##extname##_deinit(type *object) { \
        if (!object) \
            return; \
        asdf_extension_t *ext = &ASDF_EXT_STATIC_NAME(extname); \
        if (ext->vtab && ext->vtab->deinit) \
            ext->vtab->deinit(object); \
    }

#define ASDF_EXT_DEFINE_DESTROY(extname, type) \
    ASDF_EXPORT void asdf_##extname##_destroy(type *object) { \
        if (!object) \
            return; \
        asdf_##extname##_deinit(object); \
        free(object); \
    }

#define ASDF_EXT_DEFINE_COPY_INTO(extname, type) \
    ASDF_EXPORT bool asdf_##extname##_copy_into(asdf_file_t *file, const type *src, type *dst) { \
        if (!src || !dst) \
            return false; \
        asdf_extension_t *ext = &ASDF_EXT_STATIC_NAME(extname); \
        memset(dst, 0, sizeof(type)); \
        if (!ext->vtab || !ext->vtab->copy) { \
            memcpy(dst, src, sizeof(type)); \
            return true; \
        } \
        if (!ext->vtab->copy(file, src, dst)) { \
            asdf_##extname##_deinit(dst); \
            ASDF_ERROR_OOM(file); \
            return false; \
        } \
        return true; \
    }

#define ASDF_EXT_DEFINE_COPY(extname, type) \
    ASDF_EXPORT type *asdf_##extname##_copy(asdf_file_t *file, const type *src) { \
        if (!src) \
            return NULL; \
        type *copy = (type *)calloc(1, sizeof(type)); \
        if (!copy) \
            return NULL; \
        if (!asdf_##extname##_copy_into(file, src, copy)) { \
            free(copy); \
            return NULL; \
        } \
        return copy; \
    }

#define ASDF_EXT_DEFINE_ARRAY_COPY(extname, type) \
    ASDF_EXPORT type **asdf_##extname##_array_copy(asdf_file_t *file, const type **src) { \
        size_t count = 0; \
        while (src[count]) \
            count++; \
        type **dst = (type **)malloc((count + 1) * sizeof(type *)); \
        if (!dst) \
            return NULL; \
        for (size_t i = 0; i < count; i++) { \
            dst[i] = asdf_##extname##_copy(file, src[i]); \
            if (!dst[i]) { \
                for (size_t j = 0; j < i; j++) \
                    asdf_##extname##_destroy(dst[j]); \
                free((void *)dst); \
                return NULL; \
            } \
        } \
        dst[count] = NULL; \
        return dst; \
    }

#define ASDF_REGISTER_EXTENSION(extname, type, software, vtab, userdata, ...) \
    ASDF_EXT_DEFINE(extname, type, software, vtab, userdata, __VA_ARGS__); \
    ASDF_EXT_DEFINE_VALUE_AS_TYPE(extname, type) \
    ASDF_EXT_DEFINE_VALUE_IS_TYPE(extname) \
    ASDF_EXT_DEFINE_VALUE_OF_TYPE(extname, type) \
    ASDF_EXT_DEFINE_IS_TYPE(extname, type) \
    ASDF_EXT_DEFINE_GET(extname, type) \
    ASDF_EXT_DEFINE_SET(extname, type) \
    ASDF_EXT_DEFINE_DEINIT(extname, type) \
    ASDF_EXT_DEFINE_DESTROY(extname, type) \
    ASDF_EXT_DEFINE_COPY_INTO(extname, type) \
    ASDF_EXT_DEFINE_COPY(extname, type) \
    ASDF_EXT_DEFINE_ARRAY_COPY(extname, type) \
    static ASDF_CONSTRUCTOR void ASDF_EXPAND( \
        ASDF_EXT_PREFIX, _register_##extname##_extension)(void) { \
        asdf_extension_register(&ASDF_EXT_STATIC_NAME(extname)); \
    }

#define ASDF_DECLARE_EXTENSION(extname, type) \
    ASDF_EXPORT asdf_value_err_t asdf_value_as_##extname(asdf_value_t *value, type **out); \
    ASDF_EXPORT bool asdf_value_is_##extname(asdf_value_t *value); \
    ASDF_EXPORT asdf_value_t *asdf_value_of_##extname(asdf_file_t *file, const type *obj); \
    ASDF_EXPORT bool asdf_is_##extname(asdf_file_t *file, const char *path); \
    ASDF_EXPORT asdf_value_err_t asdf_get_##extname( \
        asdf_file_t *file, const char *path, type **out); \
    ASDF_EXPORT asdf_value_err_t asdf_set_##extname( \
        asdf_file_t *file, const char *path, const type *obj); \
    ASDF_EXPORT type *asdf_##extname##_copy(asdf_file_t *file, const type *src); \
    ASDF_EXPORT bool asdf_##extname##_copy_into(asdf_file_t *file, const type *src, type *dst); \
    ASDF_EXPORT type **asdf_##extname##_array_copy(asdf_file_t *file, const type **src); \
    ASDF_EXPORT void asdf_##extname##_deinit(type *object); \
    ASDF_EXPORT void asdf_##extname##_destroy(type *object)

ASDF_END_DECLS

#endif /* ASDF_EXTENSION_H */
