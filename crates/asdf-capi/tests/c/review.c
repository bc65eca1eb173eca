/*
 * review: the defects an outside review found in the C API, each checked (built with
 * AddressSanitizer by tests/regressions.rs; any failed check, crash or leak fails).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asdf/core/ndarray.h>
#include <asdf/file.h>
#include <asdf/value.h>

static int failures = 0;
#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            printf("FAILED line %d: %s\n", __LINE__, #cond); \
            failures++; \
        } \
    } while (0)

#define HEAD "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"

static asdf_file_t *open_text(const char *text) {
    return asdf_open_mem(text, strlen(text));
}

int main(int argc, char **argv) {
    /* Keys as written: 1, 0x1 and 01, and true and True, are five keys. */
    asdf_file_t *f = open_text(HEAD "1: a\n0x1: b\n01: c\ntrue: d\nTrue: e\n...\n");
    asdf_value_t *root = asdf_get_value(f, "");
    CHECK(asdf_container_size(root) == 5);
    const char *s = NULL;
    CHECK(asdf_get_string0(f, "0x1", &s) == ASDF_VALUE_OK && s && strcmp(s, "b") == 0);
    CHECK(asdf_get_string0(f, "True", &s) == ASDF_VALUE_OK && s && strcmp(s, "e") == 0);
    asdf_value_destroy(root);
    asdf_close(f);

    /* A complex key does not make the rest unreadable. */
    f = open_text(HEAD "? [1, 2]\n: complexkey\ngood: 1\n...\n");
    int64_t i = 0;
    CHECK(asdf_get_int64(f, "good", &i) == ASDF_VALUE_OK && i == 1);
    asdf_close(f);

    /* Finding through an alias to an ancestor ends. */
    f = open_text(HEAD "self: &s [1, *s]\n...\n");
    root = asdf_get_value(f, "");
    asdf_find_iter_t *it = asdf_find_iter_init(root, NULL);
    int n = 0;
    while (asdf_value_find_iter_next(&it))
        if (++n > 1000)
            break;
    asdf_find_iter_destroy(it);
    CHECK(n < 1000);
    asdf_value_t *none = asdf_value_find(root, asdf_value_is_string);
    CHECK(none == NULL);
    asdf_value_destroy(root);
    asdf_close(f);

    /* A container set into itself is refused and stays usable. */
    f = asdf_open(NULL);
    asdf_mapping_t *m = asdf_mapping_create(f);
    CHECK(asdf_mapping_set_int8(m, "x", 1) == ASDF_VALUE_OK);
    CHECK(asdf_mapping_set_mapping(m, "self", m) != ASDF_VALUE_OK);
    CHECK(asdf_mapping_size(m) == 1);
    asdf_sequence_t *q = asdf_sequence_create(f);
    CHECK(asdf_sequence_append_sequence(q, q) != ASDF_VALUE_OK);
    CHECK(asdf_sequence_size(q) == 0);
    asdf_sequence_destroy(q);
    CHECK(asdf_set_mapping(f, "m", m) == ASDF_VALUE_OK);
    asdf_close(f);

    /* A block the engine cannot decode: the read fails and says why. */
    if (argc > 1) {
        f = asdf_open(argv[1], "r");
        asdf_ndarray_t *nd = NULL;
        CHECK(asdf_get_ndarray(f, "zlib", &nd) == ASDF_VALUE_OK);
        void *buf = NULL;
        CHECK(nd && asdf_ndarray_read_all(nd, ASDF_DATATYPE_SOURCE, &buf) != ASDF_NDARRAY_OK);
        CHECK(asdf_error_code(f) == ASDF_ERR_UNKNOWN_COMPRESSION);
        CHECK(asdf_error(f) && strstr(asdf_error(f), "xxxx"));
        free(buf);
        asdf_ndarray_destroy(nd);
        asdf_close(f);
    }

    /* A write that cannot happen fails with its reason (the engine's atomic write: nothing
     * half-written is left). */
    f = asdf_open(NULL);
    CHECK(asdf_set_int32(f, "x", 1) == ASDF_VALUE_OK);
    CHECK(asdf_write_to_file(f, "/nonexistent-dir-asdf-capi/x.asdf") == -1);
    CHECK(asdf_error_code(f) == ASDF_ERR_SYSTEM && asdf_error(f) != NULL);
    asdf_close(f);

    /* NULL everywhere: errors, no crash. */
    CHECK(asdf_get_value(NULL, "x") == NULL);
    CHECK(asdf_value_get_type(NULL) == ASDF_VALUE_UNKNOWN);
    CHECK(asdf_mapping_get(NULL, "x") == NULL);
    CHECK(asdf_sequence_get(NULL, 0) == NULL);
    CHECK(asdf_mapping_set(NULL, "x", NULL) != ASDF_VALUE_OK);
    CHECK(asdf_value_find(NULL, NULL) == NULL);
    CHECK(asdf_ndarray_read_all(NULL, ASDF_DATATYPE_FLOAT64, NULL) != ASDF_NDARRAY_OK);
    CHECK(asdf_write_to_mem(NULL, NULL, NULL) != 0);
    asdf_close(NULL);

    printf("%d failures\n", failures);
    return failures != 0;
}
