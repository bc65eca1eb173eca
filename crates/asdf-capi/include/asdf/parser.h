/*
 * asdf/parser.h: the parser's configuration in asdf_config_t. (libasdf's event-level parser
 * functions, asdf_parser_*, are not provided by asdf-rs yet.)
 */
#ifndef ASDF_PARSER_H
#define ASDF_PARSER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <asdf/error.h>
#include <asdf/log.h>
#include <asdf/util.h>

ASDF_BEGIN_DECLS

#define _ASDF_PARSER_OPTS(X) \
    X(ASDF_PARSER_OPT_EMIT_YAML_EVENTS, 0) \
    X(ASDF_PARSER_OPT_BUFFER_TREE, 1)

typedef enum {
#define X(flag, bit) flag = (1UL << (bit)),
    _ASDF_PARSER_OPTS(X)
#undef X
} asdf_parser_opt_t;

typedef uint64_t asdf_parser_optflags_t;

typedef struct asdf_parser_cfg {
    asdf_parser_optflags_t flags;
    asdf_log_cfg_t *log;
} asdf_parser_cfg_t;

typedef struct asdf_parser asdf_parser_t;

ASDF_END_DECLS

#endif /* ASDF_PARSER_H */
