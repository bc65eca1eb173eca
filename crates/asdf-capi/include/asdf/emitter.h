/*
 * asdf/emitter.h: how files are written (the emitter's part of asdf_config_t).
 */
#ifndef ASDF_EMITTER_H
#define ASDF_EMITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asdf/util.h>
#include <asdf/yaml.h>

ASDF_BEGIN_DECLS

#define ASDF__EMITTER_OPTS(X) \
    X(ASDF_EMITTER_OPT_DEFAULT, 0) \
    X(ASDF_EMITTER_OPT_EMIT_EMPTY, 1) \
    X(ASDF_EMITTER_OPT_NO_BLOCK_CHECKSUM, 2) \
    X(ASDF_EMITTER_OPT_NO_BLOCK_INDEX, 3) \
    X(ASDF_EMITTER_OPT_EMIT_EMPTY_TREE, 4) \
    X(ASDF_EMITTER_OPT_NO_EMIT_EMPTY_TREE, 5) \
    X(ASDF_EMITTER_OPT_NO_EMIT_ASDF_LIBRARY, 6) \
    X(ASDF_EMITTER_OPT_LAST, 62)

typedef enum {
#define X(flag, bit) flag = (1UL << (bit)),
    ASDF__EMITTER_OPTS(X)
#undef X
} asdf_emitter_opt_t;

typedef uint64_t asdf_emitter_optflags_t;

/* Where new arrays' data go. */
typedef enum {
    ASDF_ARRAY_STORAGE_DEFAULT = 0,
    ASDF_ARRAY_STORAGE_INLINE = 1,
    ASDF_ARRAY_STORAGE_INTERNAL = 2,
    ASDF_ARRAY_STORAGE_EXTERNAL = 3,
} asdf_array_storage_t;

typedef struct asdf_emitter_cfg {
    asdf_emitter_optflags_t flags;
    asdf_yaml_tag_handle_t *tag_handles;
    size_t inline_ndarray_warning_thresh;
    asdf_array_storage_t array_storage;
} asdf_emitter_cfg_t;

ASDF_END_DECLS

#endif /* ASDF_EMITTER_H */
