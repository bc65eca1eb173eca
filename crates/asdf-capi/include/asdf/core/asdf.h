/*
 * asdf/core/asdf.h: the root of a file (core/asdf-1.1.0) as asdf_meta_t: its `asdf_library`
 * and `history`; and the library's own version and software record.
 */
#ifndef ASDF_CORE_ASDF_H
#define ASDF_CORE_ASDF_H

#include <asdf/core/extension_metadata.h>
#include <asdf/core/history_entry.h>
#include <asdf/core/software.h>
#include <asdf/core/time.h>
#include <asdf/extension.h>
#include <asdf/util.h>
#include <asdf/version.h>

ASDF_BEGIN_DECLS

/* This library's version and its software record (asdf-rs's, in asdf-rs). */
ASDF_EXPORT extern asdf_version_t libasdf_version;
ASDF_EXPORT extern asdf_software_t libasdf_software;

#define ASDF_STANDARD_TAG_PREFIX "tag:stsci.edu:asdf/"
#define ASDF_CORE_TAG_PREFIX ASDF_STANDARD_TAG_PREFIX "core/"

/* NULL-terminated lists, or NULL. */
typedef struct {
    const asdf_extension_metadata_t **extensions;
    const asdf_history_entry_t **entries;
} asdf_meta_history_t;

typedef struct {
    asdf_software_t *asdf_library;
    asdf_meta_history_t history;
} asdf_meta_t;

ASDF_DECLARE_EXTENSION(meta, asdf_meta_t);

ASDF_END_DECLS

#endif /* ASDF_CORE_ASDF_H */
