/*
 * asdf/yaml.h: YAML node styles, event kinds and tag handles.
 */
#ifndef ASDF_YAML_H
#define ASDF_YAML_H

#include <asdf/event.h>
#include <asdf/util.h>

ASDF_BEGIN_DECLS

/* How a mapping or sequence is written. */
typedef enum {
    ASDF_YAML_NODE_STYLE_AUTO = 0,
    ASDF_YAML_NODE_STYLE_FLOW,
    ASDF_YAML_NODE_STYLE_BLOCK
} asdf_yaml_node_style_t;

typedef enum {
    ASDF_YAML_NONE_EVENT = 0,
    ASDF_YAML_STREAM_START_EVENT,
    ASDF_YAML_STREAM_END_EVENT,
    ASDF_YAML_DOCUMENT_START_EVENT,
    ASDF_YAML_DOCUMENT_END_EVENT,
    ASDF_YAML_MAPPING_START_EVENT,
    ASDF_YAML_MAPPING_END_EVENT,
    ASDF_YAML_SEQUENCE_START_EVENT,
    ASDF_YAML_SEQUENCE_END_EVENT,
    ASDF_YAML_SCALAR_EVENT,
    ASDF_YAML_ALIAS_EVENT
} asdf_yaml_event_type_t;

/* A %TAG directive: `handle` stands for `prefix`. */
typedef struct {
    const char *handle;
    const char *prefix;
} asdf_yaml_tag_handle_t;

ASDF_END_DECLS

#endif /* ASDF_YAML_H */
