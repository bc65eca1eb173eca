/*
 * asdf/core/history_entry.h: core/history_entry-1.0.0 as asdf_history_entry_t, and adding one
 * to a file.
 */
#ifndef ASDF_CORE_HISTORY_ENTRY_H
#define ASDF_CORE_HISTORY_ENTRY_H

#include <time.h>

#include <asdf/core/software.h>
#include <asdf/extension.h>
#include <asdf/file.h>

#include <asdf/core/time.h>

ASDF_BEGIN_DECLS

typedef struct {
    const char *description;
    const asdf_time_t *time;
    /* NULL-terminated, or NULL. */
    const asdf_software_t **software;
} asdf_history_entry_t;

ASDF_DECLARE_EXTENSION(history_entry, asdf_history_entry_t);

/* Adds an entry with `description` and the current time to the file's history: 0 or -1. */
ASDF_EXPORT int asdf_history_entry_add(asdf_file_t *file, const char *description);

ASDF_END_DECLS

#endif /* ASDF_CORE_HISTORY_ENTRY_H */
