/*
 * asdf/version.h: version strings split into their parts (as the versions in tags).
 */
#ifndef ASDF_VERSION_H
#define ASDF_VERSION_H

#include <asdf/util.h>

ASDF_BEGIN_DECLS

/* A parsed version: `X[.Y[.Z]]` and what follows. */
typedef struct {
    /* The whole string as given. */
    const char *version;
    /* The numbers (0 where absent). */
    unsigned int major;
    unsigned int minor;
    unsigned int patch;
    /* What follows the numbers (one '.' or '-' after a full X.Y.Z dropped), or NULL. */
    const char *extra;
} asdf_version_t;

/* Parses `version`; NULL for NULL or when it does not start with a number. Free with
 * asdf_version_destroy. */
ASDF_EXPORT asdf_version_t *asdf_version_parse(const char *version);

/* A copy of `version` (NULL for NULL), freed with asdf_version_destroy. */
ASDF_EXPORT asdf_version_t *asdf_version_copy(const asdf_version_t *version);

/* Frees a version (NULL is ignored). */
ASDF_EXPORT void asdf_version_destroy(asdf_version_t *version);

ASDF_END_DECLS

#endif /* ASDF_VERSION_H */
