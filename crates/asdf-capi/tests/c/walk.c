/*
 * walk: prints every value of an ASDF file's tree through libasdf's public API, one line per
 * value (path, type, tag, and the value read as its type), depth-first. Built twice by
 * tests/differential.rs, against libasdf and against asdf-rs's C API, whose outputs must
 * agree. Uses only names both libraries provide.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <asdf/file.h>
#include <asdf/value.h>

static void print_value(asdf_value_t *v) {
    asdf_value_type_t t = asdf_value_get_type(v);
    const char *tag = asdf_value_tag(v);
    printf("%s\t%s\t%s\t", asdf_value_path(v), asdf_value_type_string(t), tag ? tag : "-");
    switch (t) {
    case ASDF_VALUE_STRING: {
        const char *s = NULL;
        size_t len = 0;
        if (asdf_value_as_string(v, &s, &len) == ASDF_VALUE_OK) {
            printf("%zu:", len);
            for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 32 || c == 127 || c == '\\')
                    printf("\\x%02x", c);
                else
                    putchar(c);
            }
        }
        break;
    }
    case ASDF_VALUE_BOOL: {
        bool b = false;
        printf("%d %d", (int)asdf_value_as_bool(v, &b), (int)b);
        break;
    }
    case ASDF_VALUE_INT8:
    case ASDF_VALUE_INT16:
    case ASDF_VALUE_INT32:
    case ASDF_VALUE_INT64: {
        int64_t i = 0;
        printf("%d %" PRId64, (int)asdf_value_as_int64(v, &i), i);
        break;
    }
    case ASDF_VALUE_UINT8:
    case ASDF_VALUE_UINT16:
    case ASDF_VALUE_UINT32:
    case ASDF_VALUE_UINT64: {
        uint64_t u = 0;
        printf("%d %" PRIu64, (int)asdf_value_as_uint64(v, &u), u);
        break;
    }
    case ASDF_VALUE_DOUBLE:
    case ASDF_VALUE_FLOAT: {
        double d = 0;
        printf("%d %.17g", (int)asdf_value_as_double(v, &d), d);
        break;
    }
    case ASDF_VALUE_MAPPING:
    case ASDF_VALUE_SEQUENCE:
        printf("%d", asdf_container_size(v));
        break;
    default: {
        const char *s = NULL;
        printf("scalar=%d", (int)asdf_value_as_scalar0(v, &s));
        if (s)
            printf(" %s", s);
    }
    }
    putchar('\n');
}

static void walk(asdf_value_t *v, int depth) {
    print_value(v);
    if (depth > 200 || !asdf_value_is_container(v))
        return;
    asdf_container_iter_t *it = asdf_container_iter_init(v);
    while (asdf_container_iter_next(&it)) {
        if (it->key)
            printf("key\t%s\n", it->key);
        walk(it->value, depth + 1);
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        printf("== %s\n", strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i]);
        asdf_file_t *f = asdf_open(argv[i], "r");
        if (!f) {
            printf("open failed\n");
            continue;
        }
        asdf_value_t *root = asdf_get_value(f, "");
        if (!root) {
            printf("no tree\n");
        } else {
            walk(root, 0);
            asdf_value_destroy(root);
        }
        asdf_close(f);
    }
    return 0;
}
