/*
 * arrays: every ndarray of each file given, read through libasdf's public API: its shape,
 * datatype and byte order; every element read whole as float64; a tile of each 2-D plane (or
 * less for a smaller array); and the first and last elements read one by one. Built against
 * libasdf and against asdf-rs's C API by tests/differential.rs; the outputs must agree.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asdf/core/ndarray.h>
#include <asdf/file.h>
#include <asdf/value.h>

static bool is_array(asdf_value_t *v) {
    return asdf_value_is_ndarray(v);
}

static void print_double(double d) {
    if (isnan(d))
        printf(" nan");
    else
        printf(" %.17g", d);
}

static void show(asdf_value_t *v) {
    asdf_ndarray_t *nd = NULL;
    int err = asdf_value_as_ndarray(v, &nd);
    printf("%s: as_ndarray=%d", asdf_value_path(v), err);
    if (err != ASDF_VALUE_OK || !nd) {
        printf("\n");
        return;
    }
    printf(" ndim=%u shape=", nd->ndim);
    for (uint32_t i = 0; i < nd->ndim; i++)
        printf("%s%" PRIu64, i ? "x" : "", nd->shape[i]);
    printf(" type=%s size=%" PRIu64 " order=%c n=%" PRIu64 "\n",
        asdf_scalar_datatype_to_string(nd->datatype.type), nd->datatype.size,
        nd->byteorder ? (char)nd->byteorder : '?', asdf_ndarray_size(nd));
    bool numeric = nd->datatype.type >= ASDF_DATATYPE_INT8 && nd->datatype.type <= ASDF_DATATYPE_FLOAT64 &&
        nd->datatype.type != ASDF_DATATYPE_FLOAT16;
    uint64_t n = asdf_ndarray_size(nd);
    if (numeric && n > 0 && n < 100000000) {
        double *all = NULL;
        int e = asdf_ndarray_read_all(nd, ASDF_DATATYPE_FLOAT64, (void **)&all);
        printf("  read_all=%d", e);
        if (all) {
            double sum = 0;
            for (uint64_t i = 0; i < n; i++)
                if (!isnan(all[i]))
                    sum += all[i];
            printf(" sum=%.17g first/last:", sum);
            print_double(all[0]);
            print_double(all[n - 1]);
            free(all);
        }
        printf("\n");
        if (nd->ndim >= 1 && nd->ndim <= 8) {
            uint64_t first[8] = {0}, last[8] = {0};
            for (uint32_t i = 0; i < nd->ndim; i++)
                last[i] = nd->shape[i] ? nd->shape[i] - 1 : 0;
            asdf_ndarray_err_t e1 = 0, e2 = 0;
            double a = asdf_ndarray_read_float64_at(nd, first, &e1);
            double b = asdf_ndarray_read_float64_at(nd, last, &e2);
            printf("  at: %d", (int)e1);
            print_double(a);
            printf(" %d", (int)e2);
            print_double(b);
            printf("\n");
        }
        if (nd->ndim >= 2 && nd->ndim <= 8) {
            uint64_t w = nd->shape[nd->ndim - 1] < 3 ? nd->shape[nd->ndim - 1] : 3;
            uint64_t h = nd->shape[nd->ndim - 2] < 2 ? nd->shape[nd->ndim - 2] : 2;
            uint64_t plane[8] = {0};
            double *tile = NULL;
            int e3 = asdf_ndarray_read_tile_2d(nd, 0, 0, w, h, plane, ASDF_DATATYPE_FLOAT64, (void **)&tile);
            printf("  tile %" PRIu64 "x%" PRIu64 ": %d", w, h, e3);
            if (tile) {
                for (uint64_t i = 0; i < w * h; i++)
                    print_double(tile[i]);
                free(tile);
            }
            printf("\n");
        }
        int32_t *ints = NULL;
        int e4 = asdf_ndarray_read_all(nd, ASDF_DATATYPE_INT32, (void **)&ints);
        printf("  as int32: %d", e4);
        if (ints) {
            printf(" %" PRId32 " %" PRId32, ints[0], ints[n - 1]);
            free(ints);
        }
        printf("\n");
    }
    asdf_ndarray_destroy(nd);
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
        if (root) {
            asdf_find_iter_t *it = asdf_find_iter_init_ex(root, is_array, true, NULL, -1);
            while (asdf_value_find_iter_next(&it))
                show(it->value);
            asdf_value_destroy(root);
        }
        asdf_close(f);
    }
    return 0;
}
