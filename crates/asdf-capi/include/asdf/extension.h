/*
 * asdf/extension.h: tags (and, in libasdf, extensions: asdf-rs does not provide the extension
 * registry yet; the types that other headers name are declared).
 */
#ifndef ASDF_EXTENSION_H
#define ASDF_EXTENSION_H

#include <assert.h>
#include <stdbool.h>

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

/* Parses a tag; a tag without a version gets a NULL version. NULL for NULL. Free with
 * asdf_tag_destroy. */
ASDF_EXPORT asdf_tag_t *asdf_tag_parse(const char *tag);

/* Frees a tag (NULL is ignored). */
ASDF_EXPORT void asdf_tag_destroy(asdf_tag_t *tag);

ASDF_END_DECLS

#endif /* ASDF_EXTENSION_H */
