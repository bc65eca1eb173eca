/*
 * asdf/core/software.h: core/software-1.0.0 as asdf_software_t (defined in asdf/extension.h),
 * and the file's `asdf_library`.
 */
#ifndef ASDF_CORE_SOFTWARE_H
#define ASDF_CORE_SOFTWARE_H

#include <asdf/extension.h>
#include <asdf/file.h>

ASDF_BEGIN_DECLS

ASDF_DECLARE_EXTENSION(software, asdf_software_t);

/* Sets the software written as the file's `asdf_library` (a copy is kept). */
ASDF_EXPORT void asdf_library_set(asdf_file_t *file, const asdf_software_t *software);
/* Sets only the version written in the file's `asdf_library`. */
ASDF_EXPORT void asdf_library_set_version(asdf_file_t *file, const char *version);

ASDF_END_DECLS

#endif /* ASDF_CORE_SOFTWARE_H */
