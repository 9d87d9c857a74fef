/*
 * Optional native speed-up for the stored-record format: batch operations over many records in one
 * call, with the CPU's CRC-32C instruction. A call into native code costs ~0.3 µs, as much as the
 * checksum of a 128-byte record in TypeScript, so the win comes from doing a whole batch per call:
 *
 *   storeRecords(wire, count, target, at, positions?)  PRODUCE wire records -> stored records + CRCs
 *   scanRecords(buf, start, end)                       check stored records -> [validBytes, records, stop]
 *   scanFile(fd, length, indexIntervalBytes)           the recovery scan of a segment file (mmap)
 *   crc32c(buf, start, end)                            one checksum, without a view allocation
 *
 * Everything here has a TypeScript twin in src/ that is the reference; tests compare the two. Input
 * is validated by the caller (TypeScript) before it gets here, but nothing here trusts a length
 * field: every read is bounds-checked against the buffer.
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- CRC-32C */

static uint32_t crc_table[8][256];

static void crc_init_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++) {
    for (int s = 1; s < 8; s++) {
      uint32_t p = crc_table[s - 1][i];
      crc_table[s][i] = (p >> 8) ^ crc_table[0][p & 0xff];
    }
  }
}

/* Portable slicing-by-8, for CPUs without the instruction. */
static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t n) {
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    lo ^= crc;
    crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
          crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
          crc_table[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n) {
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}
#endif

static uint32_t (*crc_fn)(uint32_t, const uint8_t *, size_t) = crc_soft;
static const char *crc_kind = "table";

static void crc_select(void) {
  crc_init_table();
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) {
    crc_fn = crc_hw;
    crc_kind = "sse4.2";
  }
#endif
}

static inline uint32_t crc32c(const uint8_t *p, size_t n) { return crc_fn(0, p, n); }

static inline int32_t read_i32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}
static inline uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline void write_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* ---------------------------------------------------------------- scanning */

enum { STOP_END = 0, STOP_SHORT_HEADER = 1, STOP_BAD_SIZE = 2, STOP_PAST_END = 3, STOP_CRC = 4 };

typedef struct {
  size_t valid;
  uint32_t records;
  int stop;
} scan_result;

/* Walks stored records in p[0, n); calls `note` (if any) per valid record with its position and size. */
static scan_result scan(const uint8_t *p, size_t n, void (*note)(void *, size_t, size_t), void *ctx) {
  scan_result r = {0, 0, STOP_END};
  size_t pos = 0;
  while (pos < n) {
    if (n - pos < 8) {
      r.stop = STOP_SHORT_HEADER;
      break;
    }
    int32_t size = read_i32(p + pos);
    if (size <= 0) {
      r.stop = STOP_BAD_SIZE;
      break;
    }
    if ((size_t)size > n - pos - 8) {
      r.stop = STOP_PAST_END;
      break;
    }
    if (crc32c(p + pos + 8, (size_t)size) != read_u32(p + pos + 4)) {
      r.stop = STOP_CRC;
      break;
    }
    if (note) note(ctx, pos, 8 + (size_t)size);
    r.records++;
    pos += 8 + (size_t)size;
  }
  r.valid = pos;
  return r;
}

/* ---------------------------------------------------------------- N-API glue */

#define CHECK(call)                                                      \
  do {                                                                   \
    if ((call) != napi_ok) {                                             \
      napi_throw_error(env, NULL, "booblik native: " #call " failed"); \
      return NULL;                                                       \
    }                                                                    \
  } while (0)

static int get_bytes(napi_env env, napi_value v, uint8_t **data, size_t *len) {
  bool is_typed;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  size_t length;
  void *ptr;
  napi_value ab;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, &length, &ptr, &ab, &offset) != napi_ok) return 0;
  if (type != napi_uint8_array) return 0;
  *data = (uint8_t *)ptr;
  *len = length;
  return 1;
}

static int get_index(napi_env env, napi_value v, double max, size_t *out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok) return 0;
  if (!(d >= 0 && d <= max) || d != (double)(size_t)d) return 0;
  *out = (size_t)d;
  return 1;
}

static napi_value throw_range(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

/* crc32c(buf, start, end) -> uint32 */
static napi_value js_crc32c(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *data;
  size_t len, start, end;
  if (argc < 3 || !get_bytes(env, argv[0], &data, &len)) return throw_range(env, "crc32c(buf, start, end)");
  if (!get_index(env, argv[1], (double)len, &start) || !get_index(env, argv[2], (double)len, &end) || start > end) {
    return throw_range(env, "crc32c: range outside the buffer");
  }
  napi_value out;
  CHECK(napi_create_uint32(env, crc32c(data + start, end - start), &out));
  return out;
}

/*
 * storeRecords(wire, count, target, at, positions?) -> bytes written. `wire` holds `count` records
 * as `int32 size, payload`, already validated; each becomes `int32 size, uint32 crc32c, payload` at
 * target[at...]. positions (Uint32Array), when given, receives each record's position in target.
 */
static napi_value js_store_records(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *wire, *target;
  size_t wire_len, target_len, count, at;
  if (argc < 4 || !get_bytes(env, argv[0], &wire, &wire_len) || !get_bytes(env, argv[2], &target, &target_len)) {
    return throw_range(env, "storeRecords(wire, count, target, at, positions?)");
  }
  if (!get_index(env, argv[1], 4294967295.0, &count) || !get_index(env, argv[3], (double)target_len, &at)) {
    return throw_range(env, "storeRecords: bad count or offset");
  }
  uint32_t *positions = NULL;
  size_t positions_len = 0;
  if (argc >= 5) {
    napi_valuetype t;
    CHECK(napi_typeof(env, argv[4], &t));
    if (t != napi_undefined) {
      napi_typedarray_type type;
      void *ptr;
      napi_value ab;
      size_t offset;
      if (napi_get_typedarray_info(env, argv[4], &type, &positions_len, &ptr, &ab, &offset) != napi_ok ||
          type != napi_uint32_array) {
        return throw_range(env, "storeRecords: positions must be a Uint32Array");
      }
      positions = (uint32_t *)ptr;
      if (positions_len < count) return throw_range(env, "storeRecords: positions shorter than count");
    }
  }
  size_t from = 0, to = at;
  for (size_t i = 0; i < count; i++) {
    if (wire_len - from < 4) return throw_range(env, "storeRecords: wire records end early");
    int32_t size = read_i32(wire + from);
    if (size <= 0 || (size_t)size > wire_len - from - 4) return throw_range(env, "storeRecords: bad record size");
    if (target_len - to < 8 + (size_t)size) return throw_range(env, "storeRecords: target too small");
    if (positions) positions[i] = (uint32_t)to;
    const uint8_t *payload = wire + from + 4;
    write_u32(target + to, (uint32_t)size);
    write_u32(target + to + 4, crc32c(payload, (size_t)size));
    memcpy(target + to + 8, payload, (size_t)size);
    from += 4 + (size_t)size;
    to += 8 + (size_t)size;
  }
  napi_value out;
  CHECK(napi_create_double(env, (double)(to - at), &out));
  return out;
}

static napi_value scan_result_array(napi_env env, scan_result r) {
  napi_value out, v;
  CHECK(napi_create_array_with_length(env, 3, &out));
  CHECK(napi_create_double(env, (double)r.valid, &v));
  CHECK(napi_set_element(env, out, 0, v));
  CHECK(napi_create_uint32(env, r.records, &v));
  CHECK(napi_set_element(env, out, 1, v));
  CHECK(napi_create_int32(env, r.stop, &v));
  CHECK(napi_set_element(env, out, 2, v));
  return out;
}

/* scanRecords(buf, start, end) -> [validBytes, records, stop] */
static napi_value js_scan_records(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *data;
  size_t len, start, end;
  if (argc < 3 || !get_bytes(env, argv[0], &data, &len)) return throw_range(env, "scanRecords(buf, start, end)");
  if (!get_index(env, argv[1], (double)len, &start) || !get_index(env, argv[2], (double)len, &end) || start > end) {
    return throw_range(env, "scanRecords: range outside the buffer");
  }
  return scan_result_array(env, scan(data + start, end - start, NULL, NULL));
}

/* The sparse index built during scanFile: one entry per interval bytes, always the first record. */
typedef struct {
  uint32_t *rel_offsets;
  uint32_t *positions;
  size_t count, capacity;
  size_t interval, since_entry;
  uint32_t record;
  int failed;
} index_builder;

static void index_note(void *ctx, size_t pos, size_t bytes) {
  index_builder *b = (index_builder *)ctx;
  if (b->count == 0 || b->since_entry >= b->interval) {
    if (b->count == b->capacity) {
      /* Grown in napi-free memory; copied into typed arrays at the end. */
      size_t cap = b->capacity ? b->capacity * 2 : 1024;
      uint32_t *o = realloc(b->rel_offsets, cap * sizeof(uint32_t));
      if (!o) {
        b->failed = 1;
        return;
      }
      b->rel_offsets = o;
      uint32_t *p = realloc(b->positions, cap * sizeof(uint32_t));
      if (!p) {
        b->failed = 1;
        return;
      }
      b->positions = p;
      b->capacity = cap;
    }
    b->rel_offsets[b->count] = b->record;
    b->positions[b->count] = (uint32_t)pos;
    b->count++;
    b->since_entry = 0;
  }
  b->since_entry += bytes;
  b->record++;
}

static napi_value typed_u32(napi_env env, const uint32_t *src, size_t n) {
  napi_value ab, arr;
  void *data;
  CHECK(napi_create_arraybuffer(env, n * sizeof(uint32_t), &data, &ab));
  if (n) memcpy(data, src, n * sizeof(uint32_t));
  CHECK(napi_create_typedarray(env, napi_uint32_array, n, ab, 0, &arr));
  return arr;
}

/*
 * scanFile(fd, length, indexIntervalBytes) -> { validBytes, records, stop, indexOffsets, indexPositions }
 * Maps the file read-only and scans it in place: no copy of the data through a buffer. Only for
 * files no one truncates meanwhile (recovery, before the partition is served).
 */
static napi_value js_scan_file(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd;
  size_t length, interval;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      !get_index(env, argv[1], 9007199254740991.0, &length) || !get_index(env, argv[2], 4294967295.0, &interval)) {
    return throw_range(env, "scanFile(fd, length, indexIntervalBytes)");
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < length) return throw_range(env, "scanFile: file shorter than length");
  index_builder b = {0};
  b.interval = interval;
  scan_result r = {0, 0, STOP_END};
  if (length > 0) {
    void *map = mmap(NULL, length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) return throw_range(env, "scanFile: mmap failed");
    madvise(map, length, MADV_SEQUENTIAL);
    r = scan((const uint8_t *)map, length, index_note, &b);
    munmap(map, length);
  }
  if (b.failed) {
    free(b.rel_offsets);
    free(b.positions);
    napi_throw_error(env, NULL, "scanFile: out of memory for the index");
    return NULL;
  }
  napi_value out, v;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_double(env, (double)r.valid, &v));
  CHECK(napi_set_named_property(env, out, "validBytes", v));
  CHECK(napi_create_uint32(env, r.records, &v));
  CHECK(napi_set_named_property(env, out, "records", v));
  CHECK(napi_create_int32(env, r.stop, &v));
  CHECK(napi_set_named_property(env, out, "stop", v));
  v = typed_u32(env, b.rel_offsets, b.count);
  CHECK(napi_set_named_property(env, out, "indexOffsets", v));
  v = typed_u32(env, b.positions, b.count);
  CHECK(napi_set_named_property(env, out, "indexPositions", v));
  free(b.rel_offsets);
  free(b.positions);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  crc_select();
  napi_property_descriptor props[] = {
      {"crc32c", NULL, js_crc32c, NULL, NULL, NULL, napi_default, NULL},
      {"storeRecords", NULL, js_store_records, NULL, NULL, NULL, napi_default, NULL},
      {"scanRecords", NULL, js_scan_records, NULL, NULL, NULL, napi_default, NULL},
      {"scanFile", NULL, js_scan_file, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props) != napi_ok) return NULL;
  napi_value kind;
  if (napi_create_string_utf8(env, crc_kind, NAPI_AUTO_LENGTH, &kind) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "crcKind", kind) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
