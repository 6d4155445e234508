// arrow-sparse-peer: a small libarrow-based reference peer for the arrow-sparse crate.
//
// Built by scripts/setup-interop.sh against the libarrow bundled in pyarrow 26.0.1
// (headers $PA/include, library $PA/libarrow.so.2600). The Tensor / SparseTensor IPC
// functions used here are deprecated in Arrow 26 but still work.
//
// Usage:
//   arrow-sparse-peer dump FILE
//   arrow-sparse-peer rewrite IN OUT
//   arrow-sparse-peer from-dense IN OUT coo|csr|csc|csf INDEX_TYPE
//   arrow-sparse-peer golden DIR
//   arrow-sparse-peer bench-csr FILE ITERS
//   arrow-sparse-peer bench-convert FILE ITERS [coo|csr|csf int32|int64]
//
// A "stream file" is a sequence of encapsulated IPC messages (FF FF FF FF, int32 LE
// metadata length, flatbuffer Message, padding, body), optionally terminated by the
// end-of-stream marker FF FF FF FF 00 00 00 00. Every message must be a SparseTensor or
// a (dense) Tensor message. Errors: one line on stderr, exit status 1.
//
// ---------------------------------------------------------------------------------------
// Wire facts observed with libarrow 26.0.1 (checked on hex dumps of the golden files and
// against the Arrow C++ sources):
//
// * Framing: every message starts with the continuation marker FF FF FF FF followed by
//   the int32 LE metadata length (which counts the flatbuffer plus its padding, not the
//   8 prefix bytes). The `metadata_length` out-parameter of WriteSparseTensor/WriteTensor
//   is 8 + that value.
// * WriteSparseTensor pads prefix+flatbuffer to a multiple of 8 (IpcWriteOptions default
//   alignment 8, NOT 64). Each body buffer starts at a multiple of 8 relative to the body
//   and is zero-padded to a multiple of 8; Message.bodyLength is the padded total.
// * WriteTensor pads prefix+flatbuffer to a multiple of 64 (kTensorAlignment), but the
//   body is NOT padded: Message.bodyLength = Tensor.data.length = size * byte_width, so
//   a message following a dense tensor whose body is not a multiple of 8 starts at an
//   unaligned file offset. Tensor.data.offset is 0.
// * Buffer.length in SparseTensor metadata:
//     - COO indices buffer, CSR/CSC indptr and indices buffers, and the values buffer
//       (all formats): the PADDED byte length (size rounded up to a multiple of 8). So
//       nnz can not be derived from the values buffer length; use
//       SparseTensor.non_zero_length.
//     - CSF indptrBuffers[i] / indicesBuffers[i]: the number of ELEMENTS (unpadded
//       byte size / index byte width), not bytes. Their offsets still advance by the
//       padded byte size. libarrow's reader relies on this: it uses that length as the
//       element count of each index array (and, as a side effect, slices only `length`
//       BYTES of the body for each index buffer). Consequently libarrow's own
//       ReadSparseTensor -> WriteSparseTensor round trip of a CSF tensor with index
//       width > 1 byte is lossy (it writes truncated buffers and lengths divided by the
//       width again). This peer repairs the CSF buffers (re-slicing count*width bytes
//       from the message body) before rewriting, so `rewrite` reproduces libarrow's
//       writer output for the logical tensor.
// * COO: SparseTensorIndexCOO.indicesStrides is written from the coordinate tensor's
//   strides, so a column-major coordinate tensor ([nnz, ndim] with strides
//   [w, nnz*w]) is written as-is and read back with those strides. isCanonical is
//   written from SparseCOOIndex::is_canonical(); flatbuffers elides default-valued
//   fields, so isCanonical=false is simply absent from the table. NOTE: libarrow's own
//   SparseCOOTensor::ToTensor() ignores those strides (treats the coordinates as
//   row-major), so it decodes column-major coordinates wrongly; `dump` honours them.
// * CSR/CSC: indptr type == indices type (libarrow ARROW_CHECKs this in one read path).
// * Dense Tensor: WriteTensor writes the tensor's strides verbatim when the tensor is
//   contiguous, so a column-major tensor keeps its column-major strides (e.g. int16 3x4
//   -> strides [2,6]); only non-contiguous tensors are rewritten row-major. The strides
//   vector is always written (row-major strides too, never omitted).
// * Dimension names: every TensorDim gets a name string; unnamed dims are written as "".
//   libarrow therefore reads back a dim_names vector of ndim "" strings.
// * EOS: WriteSparseTensor/WriteTensor never write the end-of-stream marker; this peer
//   appends FF FF FF FF 00 00 00 00 itself.
// * Conversions (from-dense): SparseCOOTensor::Make(tensor) produces WRONG, even
//   out-of-range, coordinates for a column-major dense tensor (it pairs memory order
//   with the wrong unravelling); CSR/CSC/CSF conversions handle column-major input
//   correctly. CSR/CSC need a 2-D tensor, CSF needs ndim >= 2 ("TODO for ndim <= 1"),
//   and uint64 is rejected as an index type by all four conversions. libarrow's COO
//   conversion of a row-major tensor with int64 indices is byte-identical to the
//   hand-built canonical COO tensor (coo_rowmajor_f64_i64 vs. from-dense of dense_f64).
// * Conversions and -0.0: Tensor::CountNonZero counts float32/float64 -0.0 as zero (it
//   sizes the values and CSR/CSC indices buffers), the conversion loops count it as
//   non-zero (they fill those buffers, the indptr and the CSF tree): libarrow writes
//   past its buffers (the COO conversion of many -0.0 crashed this peer) and writes
//   messages describing entries without stored values (CSF: non_zero_length = leaves,
//   empty data; CSR/CSC: non_zero_length 0, indptr counting them). `dump` prints such
//   tensors with "valueless_entries" and no entries (format/SPEC.md 3.4). float16 is
//   compared by bits, so its -0.0 is a stored entry.
// * `dump` reports what is stored; it does not reject out-of-range coordinates.
// ---------------------------------------------------------------------------------------

#include <arrow/api.h>
#include <arrow/io/api.h>
#include <arrow/ipc/api.h>
#include <arrow/sparse_tensor.h>
#include <arrow/tensor.h>
#include <arrow/util/float16.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using arrow::Buffer;
using arrow::DataType;
using arrow::Result;
using arrow::SparseTensor;
using arrow::Status;
using arrow::Tensor;

// ------------------------------------------------------------------ error handling

// Output file to delete if the program fails (so no truncated output is left behind).
std::string g_remove_on_failure;

[[noreturn]] void Fail(const std::string& msg) {
  if (!g_remove_on_failure.empty()) std::remove(g_remove_on_failure.c_str());
  std::string line = "arrow-sparse-peer: " + msg;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::exit(1);
}

void Check(const Status& st, const std::string& what) {
  if (!st.ok()) Fail(what + ": " + st.ToString());
}

template <typename T>
T Unwrap(Result<T> r, const std::string& what) {
  if (!r.ok()) Fail(what + ": " + r.status().ToString());
  return std::move(r).ValueUnsafe();
}

// ------------------------------------------------------------------ small helpers

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

const char* TypeName(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::INT8: return "int8";
    case arrow::Type::INT16: return "int16";
    case arrow::Type::INT32: return "int32";
    case arrow::Type::INT64: return "int64";
    case arrow::Type::UINT8: return "uint8";
    case arrow::Type::UINT16: return "uint16";
    case arrow::Type::UINT32: return "uint32";
    case arrow::Type::UINT64: return "uint64";
    case arrow::Type::HALF_FLOAT: return "float16";
    case arrow::Type::FLOAT: return "float32";
    case arrow::Type::DOUBLE: return "float64";
    default: return nullptr;
  }
}

const char* CheckedTypeName(const DataType& t) {
  const char* n = TypeName(t.id());
  if (!n) Fail("unsupported element type " + t.ToString());
  return n;
}

std::shared_ptr<DataType> IndexTypeFromName(const std::string& s) {
  if (s == "int8") return arrow::int8();
  if (s == "int16") return arrow::int16();
  if (s == "int32") return arrow::int32();
  if (s == "int64") return arrow::int64();
  if (s == "uint8") return arrow::uint8();
  if (s == "uint16") return arrow::uint16();
  if (s == "uint32") return arrow::uint32();
  if (s == "uint64") return arrow::uint64();
  Fail("unknown index type '" + s + "' (expected int8..int64 or uint8..uint64)");
}

bool IsIntegerIndexType(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32:
    case arrow::Type::INT64: case arrow::Type::UINT8: case arrow::Type::UINT16:
    case arrow::Type::UINT32: case arrow::Type::UINT64:
      return true;
    default:
      return false;
  }
}

// Reads one integer index value as int64 (uint64 values are reinterpreted).
int64_t LoadIndex(arrow::Type::type id, const uint8_t* p) {
  switch (id) {
    case arrow::Type::INT8: return Load<int8_t>(p);
    case arrow::Type::INT16: return Load<int16_t>(p);
    case arrow::Type::INT32: return Load<int32_t>(p);
    case arrow::Type::INT64: return Load<int64_t>(p);
    case arrow::Type::UINT8: return Load<uint8_t>(p);
    case arrow::Type::UINT16: return Load<uint16_t>(p);
    case arrow::Type::UINT32: return Load<uint32_t>(p);
    case arrow::Type::UINT64: return static_cast<int64_t>(Load<uint64_t>(p));
    default: Fail("index type is not an integer type");
  }
}

template <typename T>
void AppendInt(std::string& out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

template <typename F>
void AppendFloat(std::string& out, F v) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"inf\"" : "\"-inf\"";
  } else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round trip
    out.append(buf, r.ptr);
  }
}

float HalfToFloat(uint16_t bits) { return arrow::util::Float16::FromBits(bits).ToFloat(); }

void AppendValue(std::string& out, arrow::Type::type id, const uint8_t* p) {
  switch (id) {
    case arrow::Type::INT8: AppendInt(out, Load<int8_t>(p)); break;
    case arrow::Type::INT16: AppendInt(out, Load<int16_t>(p)); break;
    case arrow::Type::INT32: AppendInt(out, Load<int32_t>(p)); break;
    case arrow::Type::INT64: AppendInt(out, Load<int64_t>(p)); break;
    case arrow::Type::UINT8: AppendInt(out, Load<uint8_t>(p)); break;
    case arrow::Type::UINT16: AppendInt(out, Load<uint16_t>(p)); break;
    case arrow::Type::UINT32: AppendInt(out, Load<uint32_t>(p)); break;
    case arrow::Type::UINT64: AppendInt(out, Load<uint64_t>(p)); break;
    case arrow::Type::HALF_FLOAT: AppendFloat(out, HalfToFloat(Load<uint16_t>(p))); break;
    case arrow::Type::FLOAT: AppendFloat(out, Load<float>(p)); break;
    case arrow::Type::DOUBLE: AppendFloat(out, Load<double>(p)); break;
    default: Fail("unsupported value type");
  }
}

bool ValueIsZero(arrow::Type::type id, const uint8_t* p) {
  switch (id) {
    case arrow::Type::INT8: return Load<int8_t>(p) == 0;
    case arrow::Type::INT16: return Load<int16_t>(p) == 0;
    case arrow::Type::INT32: return Load<int32_t>(p) == 0;
    case arrow::Type::INT64: return Load<int64_t>(p) == 0;
    case arrow::Type::UINT8: return Load<uint8_t>(p) == 0;
    case arrow::Type::UINT16: return Load<uint16_t>(p) == 0;
    case arrow::Type::UINT32: return Load<uint32_t>(p) == 0;
    case arrow::Type::UINT64: return Load<uint64_t>(p) == 0;
    case arrow::Type::HALF_FLOAT: return HalfToFloat(Load<uint16_t>(p)) == 0.0f;
    case arrow::Type::FLOAT: return Load<float>(p) == 0.0f;
    case arrow::Type::DOUBLE: return Load<double>(p) == 0.0;
    default: Fail("unsupported value type");
  }
}

void AppendJsonString(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// ------------------------------------------------------------------ bounds checking

// A readable byte range. Index/value buffers of a tensor read from a message are
// zero-copy slices of the message body; for CSF, libarrow's slices are shorter than
// the data they describe (see the wire notes), so spans are checked against the whole
// message body, falling back to the tensor's own buffer.
struct Span {
  const uint8_t* lo = nullptr;
  const uint8_t* hi = nullptr;
  bool Contains(const uint8_t* p, int64_t nbytes) const {
    if (lo == nullptr || nbytes < 0) return false;
    if (p < lo || p > hi) return false;
    return static_cast<uint64_t>(nbytes) <= static_cast<uint64_t>(hi - p);
  }
};

Span SpanOf(const std::shared_ptr<Buffer>& b) {
  Span s;
  if (b && b->data()) {
    s.lo = b->data();
    s.hi = b->data() + b->size();
  }
  return s;
}

void CheckReadable(const Span& body, const std::shared_ptr<Buffer>& own, const uint8_t* p,
                   int64_t nbytes, const char* what) {
  if (nbytes == 0) return;
  if (p == nullptr || !(body.Contains(p, nbytes) || SpanOf(own).Contains(p, nbytes))) {
    Fail(std::string(what) + " lies outside the message body");
  }
}

int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) Fail(std::string(what) + ": overflow");
  return r;
}

// ------------------------------------------------------------------ entry collection

struct Entries {
  int ndim = 0;
  bool unsigned64_coords = false;   // print coordinates as uint64
  arrow::Type::type value_type = arrow::Type::NA;
  std::vector<int64_t> coords;      // ndim per entry
  std::vector<const uint8_t*> values;
  // Entries the index describes but stores no value for (see ValuelessEntries);
  // they are counted and checked, not collected.
  int64_t valueless = 0;

  size_t size() const { return values.size(); }

  void Add(const int64_t* c, const uint8_t* v) {
    coords.insert(coords.end(), c, c + ndim);
    values.push_back(v);
  }

  // Stable lexicographic sort by coordinates (duplicates keep storage order).
  std::vector<size_t> SortedOrder() const {
    std::vector<size_t> order(size());
    std::iota(order.begin(), order.end(), size_t{0});
    const int n = ndim;
    const int64_t* c = coords.data();
    const bool u = unsigned64_coords;
    std::stable_sort(order.begin(), order.end(), [n, c, u](size_t a, size_t b) {
      const int64_t* ca = c + a * n;
      const int64_t* cb = c + b * n;
      for (int d = 0; d < n; ++d) {
        if (ca[d] != cb[d]) {
          return u ? static_cast<uint64_t>(ca[d]) < static_cast<uint64_t>(cb[d])
                   : ca[d] < cb[d];
        }
      }
      return false;
    });
    return order;
  }

  void AppendEntry(std::string& out, size_t i) const {
    out += '[';
    for (int d = 0; d < ndim; ++d) {
      int64_t v = coords[i * ndim + d];
      if (unsigned64_coords) {
        AppendInt(out, static_cast<uint64_t>(v));
      } else {
        AppendInt(out, v);
      }
      out += ',';
    }
    AppendValue(out, value_type, values[i]);
    out += ']';
  }
};

void CollectCOO(const SparseTensor& st, const Span& body, Entries* e) {
  const auto& index = static_cast<const arrow::SparseCOOIndex&>(*st.sparse_index());
  const auto& coords = index.indices();
  const int ndim = st.ndim();
  const int64_t nnz = index.non_zero_length();
  if (coords->ndim() != 2 || coords->shape()[1] != ndim) Fail("COO coords tensor has a bad shape");
  if (!IsIntegerIndexType(coords->type_id())) Fail("COO coords type is not an integer");
  const auto itype = coords->type_id();
  const int iw = coords->type()->byte_width();
  const int vw = st.type()->byte_width();
  const auto& strides = coords->strides();
  if (nnz == 0) return;
  const uint8_t* base = coords->raw_data();
  // the extreme coordinate element must be readable
  if (strides.size() != 2 || strides[0] < 0 || strides[1] < 0) Fail("COO coords strides unsupported");
  int64_t max_off = CheckedMul(nnz - 1, strides[0], "COO coords") +
                    CheckedMul(ndim - 1, strides[1], "COO coords");
  CheckReadable(body, coords->data(), base, max_off + iw, "COO coords");
  CheckReadable(body, st.data(), st.raw_data(), CheckedMul(nnz, vw, "COO values"),
                "COO values");
  std::vector<int64_t> c(ndim);
  for (int64_t k = 0; k < nnz; ++k) {
    for (int d = 0; d < ndim; ++d) {
      c[d] = LoadIndex(itype, base + k * strides[0] + d * strides[1]);
    }
    e->Add(c.data(), st.raw_data() + k * vw);
  }
}

// CSR (compressed_axis 0) or CSC (compressed_axis 1).
void CollectCSX(const SparseTensor& st, const Span& body, int compressed_axis,
                const std::shared_ptr<Tensor>& indptr, const std::shared_ptr<Tensor>& indices,
                Entries* e, bool valueless) {
  if (st.ndim() != 2) Fail("CSR/CSC tensor must be 2-D");
  if (!IsIntegerIndexType(indptr->type_id()) || !IsIntegerIndexType(indices->type_id())) {
    Fail("CSR/CSC index type is not an integer");
  }
  const int64_t n_outer = st.shape()[compressed_axis];
  const int64_t nnz = indices->shape()[0];
  const int pw = indptr->type()->byte_width();
  const int iw = indices->type()->byte_width();
  const int vw = st.type()->byte_width();
  if (indptr->shape()[0] != n_outer + 1) Fail("indptr length does not match the shape");
  CheckReadable(body, indptr->data(), indptr->raw_data(), CheckedMul(n_outer + 1, pw, "indptr"),
                "indptr");
  CheckReadable(body, indices->data(), indices->raw_data(), CheckedMul(nnz, iw, "indices"),
                "indices");
  CheckReadable(body, st.data(), st.raw_data(), CheckedMul(nnz, vw, "values"), "values");
  int64_t c[2];
  if (valueless) {
    // indptr counts entries of which neither indices nor values are stored: check
    // that it is a plausible count (from 0, never decreasing, at most one entry per
    // element of a row / column) and count them.
    const int64_t n_inner = st.shape()[1 - compressed_axis];
    if (LoadIndex(indptr->type_id(), indptr->raw_data()) != 0) Fail("indptr does not start at 0");
    for (int64_t o = 0; o < n_outer; ++o) {
      int64_t begin = LoadIndex(indptr->type_id(), indptr->raw_data() + o * pw);
      int64_t end = LoadIndex(indptr->type_id(), indptr->raw_data() + (o + 1) * pw);
      if (end < begin || end - begin > n_inner) Fail("indptr counts are not plausible");
      e->valueless += end - begin;
    }
    return;
  }
  for (int64_t o = 0; o < n_outer; ++o) {
    int64_t begin = LoadIndex(indptr->type_id(), indptr->raw_data() + o * pw);
    int64_t end = LoadIndex(indptr->type_id(), indptr->raw_data() + (o + 1) * pw);
    if (begin < 0 || end < begin || end > nnz) Fail("indptr is not monotone within [0, nnz]");
    for (int64_t k = begin; k < end; ++k) {
      int64_t inner = LoadIndex(indices->type_id(), indices->raw_data() + k * iw);
      c[compressed_axis] = o;
      c[1 - compressed_axis] = inner;
      e->Add(c, st.raw_data() + k * vw);
    }
  }
}

void CollectCSF(const SparseTensor& st, const Span& body, Entries* e, bool valueless) {
  const auto& index = static_cast<const arrow::SparseCSFIndex&>(*st.sparse_index());
  const int ndim = st.ndim();
  const auto& axis_order = index.axis_order();
  const auto& indptr = index.indptr();
  const auto& indices = index.indices();
  if (static_cast<int>(axis_order.size()) != ndim || static_cast<int>(indices.size()) != ndim ||
      static_cast<int>(indptr.size()) != ndim - 1) {
    Fail("CSF index does not match the number of dimensions");
  }
  for (int64_t a : axis_order) {
    if (a < 0 || a >= ndim) Fail("CSF axis_order out of range");
  }
  std::vector<int64_t> len(ndim);
  for (int l = 0; l < ndim; ++l) {
    if (!IsIntegerIndexType(indices[l]->type_id())) Fail("CSF index type is not an integer");
    len[l] = indices[l]->shape()[0];
    CheckReadable(body, indices[l]->data(), indices[l]->raw_data(),
                  CheckedMul(len[l], indices[l]->type()->byte_width(), "CSF indices"),
                  "CSF indices");
  }
  for (int l = 0; l + 1 < ndim; ++l) {
    if (!IsIntegerIndexType(indptr[l]->type_id())) Fail("CSF index type is not an integer");
    if (indptr[l]->shape()[0] != len[l] + 1) Fail("CSF indptr length mismatch");
    CheckReadable(body, indptr[l]->data(), indptr[l]->raw_data(),
                  CheckedMul(len[l] + 1, indptr[l]->type()->byte_width(), "CSF indptr"),
                  "CSF indptr");
  }
  const int64_t nnz = len[ndim - 1];
  const int vw = st.type()->byte_width();
  if (!valueless) {
    CheckReadable(body, st.data(), st.raw_data(), CheckedMul(nnz, vw, "CSF values"),
                  "CSF values");
  }

  std::vector<int64_t> c(ndim, 0);
  int64_t emitted = 0;
  std::function<void(int, int64_t, int64_t)> visit = [&](int l, int64_t begin, int64_t end) {
    const auto& ind = indices[l];
    const int iw = ind->type()->byte_width();
    for (int64_t n = begin; n < end; ++n) {
      c[axis_order[l]] = LoadIndex(ind->type_id(), ind->raw_data() + n * iw);
      if (l == ndim - 1) {
        if (++emitted > nnz) Fail("CSF tree has more leaves than values");
        if (valueless) {
          if (c[axis_order[l]] < 0 || c[axis_order[l]] >= st.shape()[axis_order[l]]) {
            Fail("CSF coordinate out of range");
          }
          ++e->valueless;
        } else {
          e->Add(c.data(), st.raw_data() + n * vw);
        }
      } else {
        const auto& p = indptr[l];
        const int pw = p->type()->byte_width();
        int64_t cb = LoadIndex(p->type_id(), p->raw_data() + n * pw);
        int64_t ce = LoadIndex(p->type_id(), p->raw_data() + (n + 1) * pw);
        if (cb < 0 || ce < cb || ce > len[l + 1]) Fail("CSF indptr out of range");
        visit(l + 1, cb, ce);
      }
    }
  };
  if (ndim > 0) visit(0, 0, len[0]);
}

// Non-zero elements of a dense tensor, in row-major coordinate order.
void CollectDense(const Tensor& t, Entries* e, int64_t* count_only = nullptr) {
  const int ndim = t.ndim();
  const auto& shape = t.shape();
  const int vw = t.type()->byte_width();
  std::vector<int64_t> strides = t.strides();
  if (strides.empty()) {  // defensive: libarrow fills row-major strides
    strides.assign(ndim, vw);
    for (int d = ndim - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  }
  int64_t total = 1;
  for (int64_t s : shape) {
    if (s < 0) Fail("negative dimension");
    total = CheckedMul(total, s, "tensor size");
  }
  if (total == 0) return;
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < ndim; ++d) {
    int64_t ext = CheckedMul(shape[d] - 1, std::abs(strides[d]), "strides");
    (strides[d] < 0 ? lo : hi) += (strides[d] < 0 ? -ext : ext);
  }
  if (!t.data() || lo < 0 || hi + vw > t.data()->size()) Fail("tensor data buffer too small");
  const uint8_t* base = t.raw_data();
  const auto vt = t.type_id();
  std::vector<int64_t> idx(ndim, 0);
  int64_t off = 0;
  for (int64_t n = 0; n < total; ++n) {
    const uint8_t* p = base + off;
    if (!ValueIsZero(vt, p)) {
      if (count_only) {
        ++*count_only;
      } else {
        e->Add(idx.data(), p);
      }
    }
    for (int d = ndim - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= (shape[d] - 1) * strides[d];
      idx[d] = 0;
    }
  }
}

// ------------------------------------------------------------------ message iteration

struct Item {
  std::shared_ptr<SparseTensor> sparse;  // exactly one of sparse/dense is set
  std::shared_ptr<Tensor> dense;
  Span body;
  std::shared_ptr<Buffer> body_buffer;
};

// libarrow 26 reads CSF index buffers as slices of `count` BYTES (see wire notes);
// rebuild the index with buffers of count*width bytes sliced from the message body.
std::shared_ptr<SparseTensor> RepairCSF(const std::shared_ptr<SparseTensor>& st,
                                        const std::shared_ptr<Buffer>& body) {
  const auto& index = static_cast<const arrow::SparseCSFIndex&>(*st->sparse_index());
  auto reslice = [&](const std::shared_ptr<Tensor>& t) {
    const int64_t n = CheckedMul(t->shape()[0], t->type()->byte_width(), "CSF buffer");
    const uint8_t* p = t->raw_data();
    if (n == 0) return Unwrap(arrow::AllocateBuffer(0), "allocate");
    if (!body || !SpanOf(body).Contains(p, n)) Fail("CSF index buffer lies outside the body");
    return std::unique_ptr<Buffer>(new Buffer(body, p - body->data(), n));
  };
  std::vector<std::shared_ptr<Buffer>> indptr, indices;
  std::vector<int64_t> sizes;
  for (const auto& t : index.indptr()) indptr.push_back(reslice(t));
  for (const auto& t : index.indices()) {
    indices.push_back(reslice(t));
    sizes.push_back(t->shape()[0]);
  }
  auto new_index = Unwrap(
      arrow::SparseCSFIndex::Make(index.indptr().empty() ? index.indices()[0]->type()
                                                         : index.indptr()[0]->type(),
                                  index.indices()[0]->type(), sizes, index.axis_order(),
                                  indptr, indices),
      "rebuild CSF index");
  return Unwrap(arrow::SparseCSFTensor::Make(new_index, st->type(), st->data(), st->shape(),
                                             st->dim_names()),
                "rebuild CSF tensor");
}

template <typename Fn>
void ForEachMessage(const std::string& path, Fn&& fn) {
  auto file = Unwrap(arrow::io::ReadableFile::Open(path), "open " + path);
  auto reader = arrow::ipc::MessageReader::Open(file.get());
  for (int64_t i = 0;; ++i) {
    const std::string where = path + ": message " + std::to_string(i);
    auto msg = Unwrap(reader->ReadNextMessage(), where);
    if (!msg) break;
    Item item;
    item.body_buffer = msg->body();
    item.body = SpanOf(msg->body());
    switch (msg->type()) {
      case arrow::ipc::MessageType::SPARSE_TENSOR:
        item.sparse = Unwrap(arrow::ipc::ReadSparseTensor(*msg), where);
        break;
      case arrow::ipc::MessageType::TENSOR:
        item.dense = Unwrap(arrow::ipc::ReadTensor(*msg), where);
        break;
      default:
        Fail(where + ": not a Tensor or SparseTensor message");
    }
    fn(item, where);
  }
  Check(file->Close(), "close " + path);
}

// ------------------------------------------------------------------ dump

const char* FormatName(const SparseTensor& st) {
  switch (st.format_id()) {
    case arrow::SparseTensorFormat::COO: return "coo";
    case arrow::SparseTensorFormat::CSR: return "csr";
    case arrow::SparseTensorFormat::CSC: return "csc";
    case arrow::SparseTensorFormat::CSF: return "csf";
  }
  return "?";
}

// Whether a sparse tensor's index describes entries whose values it does not store
// at all: libarrow 26's dense -> CSF conversion of a float32/float64 tensor whose
// only "non-zeros" are -0.0 (non_zero_length = the leaves, empty data buffer), and
// its dense -> CSR/CSC conversion of one (non_zero_length 0, empty indices and data,
// indptr counting the -0.0 elements). Tensors that store some values but not all
// (the same conversions when real non-zeros are present) are not matched: dumping
// them fails, since their stored values are not those of their entries.
bool ValuelessEntries(const SparseTensor& st) {
  const int64_t data_bytes = st.data() ? st.data()->size() : 0;
  if (data_bytes != 0) return false;
  switch (st.format_id()) {
    case arrow::SparseTensorFormat::CSF:
      return st.non_zero_length() > 0;
    case arrow::SparseTensorFormat::CSR:
    case arrow::SparseTensorFormat::CSC: {
      std::shared_ptr<Tensor> indptr;
      if (st.format_id() == arrow::SparseTensorFormat::CSR) {
        indptr = static_cast<const arrow::SparseCSRIndex&>(*st.sparse_index()).indptr();
      } else {
        indptr = static_cast<const arrow::SparseCSCIndex&>(*st.sparse_index()).indptr();
      }
      const int64_t n = indptr->shape()[0];
      if (st.non_zero_length() != 0 || n < 1 || !IsIntegerIndexType(indptr->type_id())) {
        return false;
      }
      const int w = indptr->type()->byte_width();
      if (!SpanOf(indptr->data()).Contains(indptr->raw_data(), n * w)) return false;
      return LoadIndex(indptr->type_id(), indptr->raw_data() + (n - 1) * w) != 0;
    }
    default:
      return false;
  }
}

void CollectItem(const Item& item, Entries* e, std::string* index_type, int64_t* nnz) {
  if (item.sparse) {
    const SparseTensor& st = *item.sparse;
    e->ndim = st.ndim();
    e->value_type = st.type()->id();
    CheckedTypeName(*st.type());
    const bool valueless = ValuelessEntries(st);
    std::shared_ptr<DataType> itype;
    switch (st.format_id()) {
      case arrow::SparseTensorFormat::COO:
        itype = static_cast<const arrow::SparseCOOIndex&>(*st.sparse_index()).indices()->type();
        e->unsigned64_coords = itype->id() == arrow::Type::UINT64;
        CollectCOO(st, item.body, e);
        break;
      case arrow::SparseTensorFormat::CSR: {
        const auto& ix = static_cast<const arrow::SparseCSRIndex&>(*st.sparse_index());
        itype = ix.indices()->type();
        CollectCSX(st, item.body, 0, ix.indptr(), ix.indices(), e, valueless);
        break;
      }
      case arrow::SparseTensorFormat::CSC: {
        const auto& ix = static_cast<const arrow::SparseCSCIndex&>(*st.sparse_index());
        itype = ix.indices()->type();
        CollectCSX(st, item.body, 1, ix.indptr(), ix.indices(), e, valueless);
        break;
      }
      case arrow::SparseTensorFormat::CSF: {
        const auto& ix = static_cast<const arrow::SparseCSFIndex&>(*st.sparse_index());
        if (ix.indices().empty()) Fail("CSF index without levels");
        itype = ix.indices()[0]->type();
        e->unsigned64_coords = itype->id() == arrow::Type::UINT64;
        CollectCSF(st, item.body, e, valueless);
        break;
      }
    }
    *index_type = CheckedTypeName(*itype);
    *nnz = st.non_zero_length();
    if (valueless && (e->valueless == 0 || e->size() != 0)) Fail("inconsistent valueless entries");
    if (!valueless && static_cast<int64_t>(e->size()) != *nnz) {
      Fail("index structure yields " + std::to_string(e->size()) + " entries but nnz is " +
           std::to_string(*nnz));
    }
  } else {
    const Tensor& t = *item.dense;
    e->ndim = t.ndim();
    e->value_type = t.type()->id();
    CheckedTypeName(*t.type());
    CollectDense(t, e);
    index_type->clear();
    *nnz = static_cast<int64_t>(e->size());
  }
}

std::string DumpLine(const Item& item) {
  Entries e;
  std::string index_type;
  int64_t nnz = 0;
  CollectItem(item, &e, &index_type, &nnz);

  const std::vector<int64_t>& shape = item.sparse ? item.sparse->shape() : item.dense->shape();
  const std::vector<std::string>& names =
      item.sparse ? item.sparse->dim_names() : item.dense->dim_names();

  std::string out = "{\"format\":\"";
  out += item.sparse ? FormatName(*item.sparse) : "dense";
  out += "\",\"value_type\":\"";
  out += TypeName(e.value_type);
  out += "\",\"index_type\":";
  if (item.sparse) {
    out += '"' + index_type + '"';
  } else {
    out += "null";
  }
  out += ",\"shape\":[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) out += ',';
    AppendInt(out, shape[d]);
  }
  out += "],\"dim_names\":[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) out += ',';
    AppendJsonString(out, d < names.size() ? names[d] : std::string());
  }
  out += "],\"nnz\":";
  AppendInt(out, nnz);
  if (item.sparse && item.sparse->format_id() == arrow::SparseTensorFormat::CSF) {
    out += ",\"axis_order\":[";
    const auto& ao =
        static_cast<const arrow::SparseCSFIndex&>(*item.sparse->sparse_index()).axis_order();
    for (size_t i = 0; i < ao.size(); ++i) {
      if (i) out += ',';
      AppendInt(out, ao[i]);
    }
    out += ']';
  }
  if (e.valueless > 0) {
    // libarrow's index describes these entries but their values are not stored
    out += ",\"valueless_entries\":";
    AppendInt(out, e.valueless);
  }
  out += ",\"entries\":[";
  auto order = e.SortedOrder();
  for (size_t i = 0; i < order.size(); ++i) {
    if (i) out += ',';
    e.AppendEntry(out, order[i]);
  }
  out += "]}\n";
  return out;
}

void DumpFile(const std::string& path, std::FILE* out) {
  ForEachMessage(path, [&](const Item& item, const std::string&) {
    std::string line = DumpLine(item);
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) Fail("write failed");
  });
}

// ------------------------------------------------------------------ writing

const uint8_t kEos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};

void WriteSparse(const SparseTensor& st, arrow::io::OutputStream* out, const std::string& what) {
  int32_t metadata_length = 0;
  int64_t body_length = 0;
  Check(arrow::ipc::WriteSparseTensor(st, out, &metadata_length, &body_length), what);
}

void WriteDense(const Tensor& t, arrow::io::OutputStream* out, const std::string& what) {
  int32_t metadata_length = 0;
  int64_t body_length = 0;
  Check(arrow::ipc::WriteTensor(t, out, &metadata_length, &body_length), what);
}

void WriteItem(const Item& item, arrow::io::OutputStream* out, const std::string& what) {
  if (item.sparse) {
    WriteSparse(*item.sparse, out, what);
  } else {
    WriteDense(*item.dense, out, what);
  }
}

void FinishStream(const std::shared_ptr<arrow::io::FileOutputStream>& out,
                  const std::string& path) {
  Check(out->Write(kEos, sizeof(kEos)), "write " + path);
  Check(out->Close(), "close " + path);
}

int CmdRewrite(const std::string& in, const std::string& out_path) {
  auto out = Unwrap(arrow::io::FileOutputStream::Open(out_path), "open " + out_path);
  g_remove_on_failure = out_path;
  ForEachMessage(in, [&](const Item& item, const std::string& where) {
    if (item.sparse && item.sparse->format_id() == arrow::SparseTensorFormat::CSF) {
      Item fixed = item;
      fixed.sparse = RepairCSF(item.sparse, item.body_buffer);
      WriteItem(fixed, out.get(), where + ": write");
    } else {
      WriteItem(item, out.get(), where + ": write");
    }
  });
  FinishStream(out, out_path);
  g_remove_on_failure.clear();
  return 0;
}

std::shared_ptr<SparseTensor> FromDense(const Tensor& t, const std::string& format,
                                        const std::shared_ptr<DataType>& itype) {
  if (format == "coo") return Unwrap(arrow::SparseCOOTensor::Make(t, itype), "SparseCOOTensor::Make");
  if (format == "csr") return Unwrap(arrow::SparseCSRMatrix::Make(t, itype), "SparseCSRMatrix::Make");
  if (format == "csc") return Unwrap(arrow::SparseCSCMatrix::Make(t, itype), "SparseCSCMatrix::Make");
  if (format == "csf") return Unwrap(arrow::SparseCSFTensor::Make(t, itype), "SparseCSFTensor::Make");
  Fail("unknown sparse format '" + format + "' (expected coo, csr, csc or csf)");
}

int CmdFromDense(const std::string& in, const std::string& out_path, const std::string& format,
                 const std::string& index_type) {
  auto itype = IndexTypeFromName(index_type);
  if (format != "coo" && format != "csr" && format != "csc" && format != "csf") {
    Fail("unknown sparse format '" + format + "' (expected coo, csr, csc or csf)");
  }
  auto out = Unwrap(arrow::io::FileOutputStream::Open(out_path), "open " + out_path);
  g_remove_on_failure = out_path;
  ForEachMessage(in, [&](const Item& item, const std::string& where) {
    if (!item.dense) Fail(where + ": not a dense Tensor message");
    auto st = FromDense(*item.dense, format, itype);
    WriteSparse(*st, out.get(), where + ": write");
  });
  FinishStream(out, out_path);
  g_remove_on_failure.clear();
  return 0;
}

// ------------------------------------------------------------------ golden files

template <typename T>
std::shared_ptr<Buffer> MakeBuf(const std::vector<T>& v) {
  auto b = Unwrap(arrow::AllocateBuffer(static_cast<int64_t>(v.size() * sizeof(T))), "allocate");
  if (!v.empty()) std::memcpy(b->mutable_data(), v.data(), v.size() * sizeof(T));
  return std::shared_ptr<Buffer>(std::move(b));
}

struct Golden {
  std::string name;  // file stem
  std::vector<Item> items;
};

Item SparseItem(std::shared_ptr<SparseTensor> st) {
  Item i;
  i.sparse = std::move(st);
  return i;
}

Item DenseItem(std::shared_ptr<Tensor> t) {
  Item i;
  i.dense = std::move(t);
  return i;
}

// 2x3x4, the tensor used by Arrow's sparse tensor tests:
//   dense = {1,0,2,0, 0,3,0,4, 5,0,6,0,  0,11,0,12, 13,0,14,0, 0,15,0,16}
const std::vector<int64_t> kCoo3dCoords = {0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 3, 0, 2, 0, 0, 2, 2,
                                           1, 0, 1, 1, 0, 3, 1, 1, 0, 1, 1, 2, 1, 2, 1, 1, 2, 3};
const std::vector<double> kCoo3dValues = {1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16};
const std::vector<double> kDense3d = {1, 0, 2, 0, 0, 3,  0, 4, 5,  0, 6,  0,
                                      0, 11, 0, 12, 13, 0, 14, 0, 0, 15, 0, 16};

std::shared_ptr<SparseTensor> GoldenCooRowMajor() {
  auto coords = std::make_shared<Tensor>(arrow::int64(), MakeBuf(kCoo3dCoords),
                                         std::vector<int64_t>{12, 3});
  auto index = Unwrap(arrow::SparseCOOIndex::Make(coords, true), "coo index");
  return Unwrap(arrow::SparseCOOTensor::Make(index, arrow::float64(), MakeBuf(kCoo3dValues),
                                             {2, 3, 4}, {"foo", "bar", "baz"}),
                "coo tensor");
}

std::shared_ptr<SparseTensor> GoldenCooColMajor() {
  // same 12 coordinates, stored column-major: all dim-0 coords, then dim-1, then dim-2
  std::vector<int32_t> colmajor(36);
  for (int k = 0; k < 12; ++k)
    for (int d = 0; d < 3; ++d) colmajor[d * 12 + k] = static_cast<int32_t>(kCoo3dCoords[k * 3 + d]);
  auto coords = std::make_shared<Tensor>(arrow::int32(), MakeBuf(colmajor),
                                         std::vector<int64_t>{12, 3}, std::vector<int64_t>{4, 48});
  auto index = Unwrap(arrow::SparseCOOIndex::Make(coords, true), "coo index");
  std::vector<int32_t> values = {1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16};
  return Unwrap(arrow::SparseCOOTensor::Make(index, arrow::int32(), MakeBuf(values), {2, 3, 4}, {}),
                "coo tensor");
}

std::shared_ptr<SparseTensor> GoldenCooEmpty() {
  auto coords = std::make_shared<Tensor>(arrow::int64(), MakeBuf(std::vector<int64_t>{}),
                                         std::vector<int64_t>{0, 2});
  auto index = Unwrap(arrow::SparseCOOIndex::Make(coords, true), "coo index");
  return Unwrap(arrow::SparseCOOTensor::Make(index, arrow::float64(),
                                             MakeBuf(std::vector<double>{}), {3, 4}, {}),
                "coo tensor");
}

std::shared_ptr<SparseTensor> GoldenCooUnsortedDups() {
  // 4x3, non-canonical: unsorted coordinates with a duplicate (3,1) and a stored zero
  std::vector<int8_t> coords = {3, 1, 0, 2, 3, 1, 0, 0, 2, 2};
  std::vector<uint64_t> values = {18446744073709551615ull, 1, 2, 9223372036854775808ull, 0};
  auto ct = std::make_shared<Tensor>(arrow::int8(), MakeBuf(coords), std::vector<int64_t>{5, 2});
  auto index = Unwrap(arrow::SparseCOOIndex::Make(ct, false), "coo index");
  return Unwrap(arrow::SparseCOOTensor::Make(index, arrow::uint64(), MakeBuf(values), {4, 3},
                                             {"", "col"}),
                "coo tensor");
}

std::shared_ptr<SparseTensor> GoldenCooHugeShape() {
  std::vector<int64_t> coords = {0, 1999999999, 123456789, 987654321, 3999999999, 0};
  std::vector<float> values = {1.5f, -2.5f, 3.25f};
  auto ct = std::make_shared<Tensor>(arrow::int64(), MakeBuf(coords), std::vector<int64_t>{3, 2});
  auto index = Unwrap(arrow::SparseCOOIndex::Make(ct, true), "coo index");
  return Unwrap(arrow::SparseCOOTensor::Make(index, arrow::float32(), MakeBuf(values),
                                             {4000000000, 2000000000}, {"big0", "big1"}),
                "coo tensor");
}

std::shared_ptr<SparseTensor> GoldenCsr() {
  // 4x6 float32
  std::vector<int32_t> indptr = {0, 2, 2, 5, 7};
  std::vector<int32_t> indices = {1, 4, 0, 2, 5, 3, 5};
  std::vector<float> values = {1.5f, -2.25f, 3.0f, 0.1f, 1e20f, 7.0f, 8.5f};
  auto index = Unwrap(arrow::SparseCSRIndex::Make(arrow::int32(), {4, 6}, 7, MakeBuf(indptr),
                                                  MakeBuf(indices)),
                      "csr index");
  return Unwrap(arrow::SparseCSRMatrix::Make(index, arrow::float32(), MakeBuf(values), {4, 6},
                                             {"row", "col"}),
                "csr tensor");
}

std::shared_ptr<SparseTensor> GoldenCsrF16() {
  // 2x3 float16 holding special values; index type uint8
  std::vector<uint8_t> indptr = {0, 3, 6};
  std::vector<uint8_t> indices = {0, 1, 2, 0, 1, 2};
  // NaN, 65504 (max half), +inf, -inf, -0.0, 0x3555 (~0.33325195)
  std::vector<uint16_t> values = {0x7E00, 0x7BFF, 0x7C00, 0xFC00, 0x8000, 0x3555};
  auto index = Unwrap(arrow::SparseCSRIndex::Make(arrow::uint8(), {2, 3}, 6, MakeBuf(indptr),
                                                  MakeBuf(indices)),
                      "csr index");
  return Unwrap(arrow::SparseCSRMatrix::Make(index, arrow::float16(), MakeBuf(values), {2, 3}, {}),
                "csr tensor");
}

std::shared_ptr<SparseTensor> GoldenCsc() {
  // 5x4 uint16, index type int16
  std::vector<int16_t> indptr = {0, 2, 2, 5, 6};
  std::vector<int16_t> indices = {1, 3, 0, 2, 4, 4};
  std::vector<uint16_t> values = {10, 65535, 1, 2, 3, 500};
  auto index = Unwrap(arrow::SparseCSCIndex::Make(arrow::int16(), {5, 4}, 6, MakeBuf(indptr),
                                                  MakeBuf(indices)),
                      "csc index");
  return Unwrap(arrow::SparseCSCMatrix::Make(index, arrow::uint16(), MakeBuf(values), {5, 4}, {}),
                "csc tensor");
}

std::shared_ptr<SparseTensor> GoldenCsf201() {
  // 3x4x5 float32, axis_order [2,0,1], int16 indices. Entries (i,j,k)=value:
  //   (0,1,0)=91/3 (2,1,0)=0.25 (0,0,2)=-4.5 (1,0,2)=17/3
  //   (0,2,4)=2.5 (0,3,4)=-1 (1,3,4)=100 (2,3,4)=1
  std::vector<int16_t> indptr0 = {0, 2, 4, 7};
  std::vector<int16_t> indptr1 = {0, 1, 2, 3, 4, 6, 7, 8};
  std::vector<int16_t> indices0 = {0, 2, 4};
  std::vector<int16_t> indices1 = {0, 2, 0, 1, 0, 1, 2};
  std::vector<int16_t> indices2 = {1, 1, 0, 0, 2, 3, 3, 3};
  std::vector<float> values = {91.0f / 3.0f, 0.25f, -4.5f, 17.0f / 3.0f, 2.5f, -1.0f, 100.0f, 1.0f};
  auto index = Unwrap(arrow::SparseCSFIndex::Make(arrow::int16(), {3, 7, 8}, {2, 0, 1},
                                                  {MakeBuf(indptr0), MakeBuf(indptr1)},
                                                  {MakeBuf(indices0), MakeBuf(indices1),
                                                   MakeBuf(indices2)}),
                      "csf index");
  return Unwrap(arrow::SparseCSFTensor::Make(index, arrow::float32(), MakeBuf(values), {3, 4, 5},
                                             {"a", "b", "c"}),
                "csf tensor");
}

std::shared_ptr<SparseTensor> GoldenCsf4d() {
  // 2x3x2x4 uint8, axis_order [3,1,0,2], int64 indices. Entries (d0,d1,d2,d3)=value:
  //   (0,0,0,0)=1 (1,0,0,1)=42 (0,1,1,1)=9 (1,1,0,1)=128 (0,2,1,3)=7 (1,2,1,3)=255
  std::vector<int64_t> indptr0 = {0, 1, 3, 4};
  std::vector<int64_t> indptr1 = {0, 1, 2, 4, 6};
  std::vector<int64_t> indptr2 = {0, 1, 2, 3, 4, 5, 6};
  std::vector<int64_t> indices0 = {0, 1, 3};
  std::vector<int64_t> indices1 = {0, 0, 1, 2};
  std::vector<int64_t> indices2 = {0, 1, 0, 1, 0, 1};
  std::vector<int64_t> indices3 = {0, 0, 1, 0, 1, 1};
  std::vector<uint8_t> values = {1, 42, 9, 128, 7, 255};
  auto index = Unwrap(
      arrow::SparseCSFIndex::Make(arrow::int64(), {3, 4, 6, 6}, {3, 1, 0, 2},
                                  {MakeBuf(indptr0), MakeBuf(indptr1), MakeBuf(indptr2)},
                                  {MakeBuf(indices0), MakeBuf(indices1), MakeBuf(indices2),
                                   MakeBuf(indices3)}),
      "csf index");
  return Unwrap(arrow::SparseCSFTensor::Make(index, arrow::uint8(), MakeBuf(values), {2, 3, 2, 4},
                                             {}),
                "csf tensor");
}

// A row-major dense tensor of `shape` holding `data` (C type T, Arrow type `type`).
template <typename T>
std::shared_ptr<Tensor> DenseOf(const std::shared_ptr<DataType>& type, const std::vector<T>& data,
                                const std::vector<int64_t>& shape,
                                const std::vector<std::string>& names) {
  return Unwrap(Tensor::Make(type, MakeBuf(data), shape, {}, names), "dense tensor");
}

// libarrow's own dense -> sparse conversions (see "Conversions" in the wire notes).
// 4x2x3 float64 zeros, dim names x/y/z: CSF axis order [1,2,0] (dimensions by size).
std::shared_ptr<SparseTensor> GoldenCsfZeros() {
  return FromDense(*DenseOf(arrow::float64(), std::vector<double>(24, 0.0), {4, 2, 3},
                            {"x", "y", "z"}),
                   "csf", arrow::int32());
}

// The same tensor with -0.0 at (0,0,0), (1,0,1) and (3,1,2): libarrow describes
// three leaves and stores no values.
std::shared_ptr<SparseTensor> GoldenCsfNegZero() {
  std::vector<double> data(24, 0.0);
  for (int i : {0, 7, 23}) data[i] = -0.0;
  return FromDense(*DenseOf(arrow::float64(), data, {4, 2, 3}, {"x", "y", "z"}), "csf",
                   arrow::int32());
}

// 3x4 float32 zeros as CSR with int16 indices.
std::shared_ptr<SparseTensor> GoldenCsrZeros() {
  return FromDense(*DenseOf(arrow::float32(), std::vector<float>(12, 0.0f), {3, 4}, {}), "csr",
                   arrow::int16());
}

// The same matrix with -0.0 at (0,1), (2,0) and (2,3): indptr counts them,
// non_zero_length is 0, no indices and no values are stored.
std::shared_ptr<SparseTensor> GoldenCsrNegZero() {
  std::vector<float> data(12, 0.0f);
  for (int i : {1, 8, 11}) data[i] = -0.0f;
  return FromDense(*DenseOf(arrow::float32(), data, {3, 4}, {}), "csr", arrow::int16());
}

// A one-element 1x1x1 float16 tensor holding -0.0 (bits 0x8000) as CSF with uint8
// indices: for float16 libarrow compares bits, so -0.0 is a stored entry.
std::shared_ptr<SparseTensor> GoldenCsfOneF16() {
  return FromDense(*DenseOf(arrow::float16(), std::vector<uint16_t>{0x8000}, {1, 1, 1}, {}),
                   "csf", arrow::uint8());
}

std::shared_ptr<Tensor> GoldenDenseF64() {
  return Unwrap(Tensor::Make(arrow::float64(), MakeBuf(kDense3d), {2, 3, 4}, {},
                             {"foo", "bar", "baz"}),
                "dense tensor");
}

std::shared_ptr<Tensor> GoldenDenseI16ColMajor() {
  // 3x4 int16, column-major strides [2,6]; memory order is column by column
  std::vector<int16_t> mem = {0, -1, 2, 3, 0, -300, 6, 7, 0, 0, 10, 32767};
  return Unwrap(Tensor::Make(arrow::int16(), MakeBuf(mem), {3, 4}, {2, 6}, {"r", "c"}),
                "dense tensor");
}

const char* kGoldenReadme = R"(# Golden SparseTensor / Tensor IPC files

Every `.arrow` file here was written by libarrow 26.0.1 (the `libarrow.so.2600`
bundled in the pyarrow 26.0.1 wheel) using `arrow::ipc::WriteSparseTensor` /
`arrow::ipc::WriteTensor`. The tensors were built directly in C++ from the
hard-coded arrays below (see `golden` in `interop/peer.cc`), the `*_zeros_*`,
`*_negzero_*` and `*_one_*` ones by libarrow's own dense -> sparse conversions
(`SparseCSFTensor::Make` / `SparseCSRMatrix::Make` of a hard-coded dense tensor);
none of them went through files written by arrow-sparse.

Each file is a *stream*: one or more encapsulated IPC messages
(`FF FF FF FF`, int32 LE metadata length, flatbuffer `Message`, padding, body)
followed by the 8-byte end-of-stream marker `FF FF FF FF 00 00 00 00`.

Next to each `NAME.arrow` is `NAME.jsonl`: the output of
`arrow-sparse-peer dump NAME.arrow`, i.e. libarrow's view of the file (one JSON
line per message; entries sorted lexicographically by coordinates with a stable
sort). Before writing, `golden` cross-checks every sparse tensor read back from
its file against libarrow's own `SparseTensor::ToTensor()` (except the huge shape
and the tensors whose values are not stored).

A tensor whose index describes entries that store no value (the `*_negzero_*`
files, see format/SPEC.md 3.4) dumps with `"valueless_entries": N` and no
entries; arrow-sparse reads it as the empty tensor of the same shape, dim names
(and CSF axis order), so its encoding is the `*_zeros_*` file of the same name.

Regenerate (from the repository root):

    bash scripts/setup-interop.sh        # builds target/peer/arrow-sparse-peer
    target/peer/arrow-sparse-peer golden format/golden

Generation is deterministic; regenerating must produce identical bytes.

## Files

Notation: `dense(i,j,..)` = logical element; coordinates are 0-based.

### coo_rowmajor_f64_i64.arrow
COO, values float64, coords int64, shape [2,3,4], dim names foo/bar/baz,
is_canonical = true, coordinate tensor [12,3] row-major (strides [24,8]).
This is the tensor of Arrow's sparse tensor tests:
dense (row-major) = 1,0,2,0, 0,3,0,4, 5,0,6,0,  0,11,0,12, 13,0,14,0, 0,15,0,16
coords = (0,0,0) (0,0,2) (0,1,1) (0,1,3) (0,2,0) (0,2,2)
         (1,0,1) (1,0,3) (1,1,0) (1,1,2) (1,2,1) (1,2,3)
values = 1 2 3 4 5 6 11 12 13 14 15 16

### coo_colmajor_i32_i32.arrow
COO, values int32, coords int32, shape [2,3,4], no dim names, is_canonical = true.
Same 12 coordinates and values (as int32) as above, but the coordinate tensor
[12,3] is column-major: strides [4,48], i.e. the coords buffer holds the 12
dim-0 coordinates, then the 12 dim-1 coordinates, then the 12 dim-2 ones.
libarrow writes these strides verbatim into SparseTensorIndexCOO.indicesStrides.

### coo_empty_f64_i64.arrow
COO, values float64, coords int64, shape [3,4], no dim names, nnz = 0
(coords tensor [0,2], empty coords and values buffers), is_canonical = true.

### coo_unsorted_dups_u64_i8.arrow
COO, values uint64, coords int8, shape [4,3], dim names "" and "col",
is_canonical = false. Storage order:
(3,1)=18446744073709551615, (0,2)=1, (3,1)=2, (0,0)=9223372036854775808, (2,2)=0
(duplicate coordinate (3,1) and an explicitly stored zero).

### coo_hugeshape_f32_i64.arrow
COO, values float32, coords int64, shape [4000000000,2000000000],
dim names big0/big1, is_canonical = true.
coords/values: (0,1999999999)=1.5, (123456789,987654321)=-2.5, (3999999999,0)=3.25

### csr_f32_i32.arrow
CSR, values float32, indptr/indices int32, shape [4,6], dim names row/col.
indptr = 0 2 2 5 7; indices = 1 4 0 2 5 3 5;
values = 1.5 -2.25 3 0.1 1e20 7 8.5   (row 1 is empty)

### csr_f16_u8.arrow
CSR, values float16, indptr/indices uint8, shape [2,3], no dim names.
indptr = 0 3 6; indices = 0 1 2 0 1 2;
value bits = 0x7E00 (NaN) 0x7BFF (65504) 0x7C00 (+inf) 0xFC00 (-inf)
             0x8000 (-0.0) 0x3555 (0.333251953125)

### csc_u16_i16.arrow
CSC, values uint16, indptr/indices int16, shape [5,4], no dim names.
indptr = 0 2 2 5 6; indices (row numbers) = 1 3 0 2 4 4;
values = 10 65535 1 2 3 500   (column 1 is empty)

### csf_f32_i16_order201.arrow
CSF, values float32, indptr/indices int16, shape [3,4,5], dim names a/b/c,
axis_order [2,0,1] (level 0 = dim 2, level 1 = dim 0, level 2 = dim 1).
indptr[0] = 0 2 4 7; indptr[1] = 0 1 2 3 4 6 7 8
indices[0] = 0 2 4; indices[1] = 0 2 0 1 0 1 2; indices[2] = 1 1 0 0 2 3 3 3
values (float32) = 91/3 0.25 -4.5 17/3 2.5 -1 100 1
i.e. (0,1,0)=91/3 (2,1,0)=0.25 (0,0,2)=-4.5 (1,0,2)=17/3
     (0,2,4)=2.5 (0,3,4)=-1 (1,3,4)=100 (2,3,4)=1

### csf_u8_i64_4d.arrow
CSF, values uint8, indptr/indices int64, shape [2,3,2,4], no dim names,
axis_order [3,1,0,2].
indptr[0] = 0 1 3 4; indptr[1] = 0 1 2 4 6; indptr[2] = 0 1 2 3 4 5 6
indices[0] = 0 1 3; indices[1] = 0 0 1 2; indices[2] = 0 1 0 1 0 1;
indices[3] = 0 0 1 0 1 1
values = 1 42 9 128 7 255
i.e. (0,0,0,0)=1 (1,0,0,1)=42 (0,1,1,1)=9 (1,1,0,1)=128 (0,2,1,3)=7 (1,2,1,3)=255

### csf_zeros_f64_i32.arrow
libarrow's dense -> CSF conversion (int32 indices) of a float64 tensor of zeros,
shape [4,2,3], dim names x/y/z: nnz = 0, axis_order [1,2,0] (dimensions sorted by
extent), indptr[0] = indptr[1] = [0], indices[0..2] empty, no values.

### csf_negzero_f64_i32.arrow
The same conversion of the same tensor holding -0.0 at (0,0,0), (1,0,1) and
(3,1,2). libarrow 26 counts -0.0 as zero when it sizes the values buffer and as a
non-zero when it fills the index: non_zero_length = 3, axis_order [1,2,0],
indptr[0] = 0 2 3, indptr[1] = 0 1 2 3, indices[0] = 0 1, indices[1] = 0 1 2,
indices[2] = 0 1 3, and an empty values buffer. arrow-sparse reads the empty
tensor of csf_zeros_f64_i32.

### csr_zeros_f32_i16.arrow
libarrow's dense -> CSR conversion (int16 indices) of a 3x4 float32 matrix of
zeros: nnz = 0, indptr = 0 0 0 0, no indices, no values.

### csr_negzero_f32_i16.arrow
The same conversion of the matrix holding -0.0 at (0,1), (2,0) and (2,3):
non_zero_length = 0, no indices, no values, but indptr = 0 1 1 3. arrow-sparse
reads the empty matrix of csr_zeros_f32_i16.

### csf_one_f16_u8.arrow
libarrow's dense -> CSF conversion (uint8 indices) of the one-element float16
tensor [1,1,1] holding -0.0 (bits 0x8000): for float16 libarrow compares bits, so
it is one stored entry: indptr[0] = indptr[1] = 0 1, indices = 0 / 0 / 0,
value -0.0.

### dense_f64.arrow
Dense Tensor, float64, shape [2,3,4], dim names foo/bar/baz, row-major
(strides [96,32,8]), data = 1,0,2,0, 0,3,0,4, 5,0,6,0, 0,11,0,12, 13,0,14,0, 0,15,0,16
(the dense form of coo_rowmajor_f64_i64).

### dense_i16_colmajor.arrow
Dense Tensor, int16, shape [3,4], dim names r/c, column-major strides [2,6]
(written verbatim by WriteTensor). Memory order (column by column):
0 -1 2 | 3 0 -300 | 6 7 0 | 0 10 32767, so dense(i,j) = mem[i + 3*j].

### stream_mixed.arrow
One stream with 6 messages, in order: coo_rowmajor_f64_i64, csr_f32_i32,
dense_f64, csf_f32_i16_order201, csc_u16_i16, coo_empty_f64_i64.

## libarrow wire quirks worth knowing (see the comment at the top of interop/peer.cc)

* Sparse messages: prefix+flatbuffer padded to 8 bytes; each body buffer padded to 8;
  Buffer.length is the padded byte length, EXCEPT for CSF index buffers
  (indptrBuffers / indicesBuffers) where Buffer.length is the number of elements.
* Dense Tensor messages: prefix+flatbuffer padded to 64 bytes; body NOT padded.
)";

std::vector<Golden> GoldenSet() {
  std::vector<Golden> g;
  g.push_back({"coo_rowmajor_f64_i64", {SparseItem(GoldenCooRowMajor())}});
  g.push_back({"coo_colmajor_i32_i32", {SparseItem(GoldenCooColMajor())}});
  g.push_back({"coo_empty_f64_i64", {SparseItem(GoldenCooEmpty())}});
  g.push_back({"coo_unsorted_dups_u64_i8", {SparseItem(GoldenCooUnsortedDups())}});
  g.push_back({"coo_hugeshape_f32_i64", {SparseItem(GoldenCooHugeShape())}});
  g.push_back({"csr_f32_i32", {SparseItem(GoldenCsr())}});
  g.push_back({"csr_f16_u8", {SparseItem(GoldenCsrF16())}});
  g.push_back({"csc_u16_i16", {SparseItem(GoldenCsc())}});
  g.push_back({"csf_f32_i16_order201", {SparseItem(GoldenCsf201())}});
  g.push_back({"csf_u8_i64_4d", {SparseItem(GoldenCsf4d())}});
  g.push_back({"csf_zeros_f64_i32", {SparseItem(GoldenCsfZeros())}});
  g.push_back({"csf_negzero_f64_i32", {SparseItem(GoldenCsfNegZero())}});
  g.push_back({"csr_zeros_f32_i16", {SparseItem(GoldenCsrZeros())}});
  g.push_back({"csr_negzero_f32_i16", {SparseItem(GoldenCsrNegZero())}});
  g.push_back({"csf_one_f16_u8", {SparseItem(GoldenCsfOneF16())}});
  g.push_back({"dense_f64", {DenseItem(GoldenDenseF64())}});
  g.push_back({"dense_i16_colmajor", {DenseItem(GoldenDenseI16ColMajor())}});
  g.push_back({"stream_mixed",
               {SparseItem(GoldenCooRowMajor()), SparseItem(GoldenCsr()),
                DenseItem(GoldenDenseF64()), SparseItem(GoldenCsf201()),
                SparseItem(GoldenCsc()), SparseItem(GoldenCooEmpty())}});
  return g;
}

// Entries of `e` as JSON strings, in sorted order, skipping stored zeros.
std::vector<std::string> NonZeroEntryStrings(const Entries& e) {
  std::vector<std::string> out;
  for (size_t i : e.SortedOrder()) {
    if (ValueIsZero(e.value_type, e.values[i])) continue;
    std::string s;
    e.AppendEntry(s, i);
    out.push_back(std::move(s));
  }
  return out;
}

// Cross-check the index walk of a sparse tensor read from a file against libarrow's
// SparseTensor::ToTensor(). Skipped for huge shapes and for tensors with duplicates.
void CrossCheck(const Item& item, const std::string& where) {
  if (!item.sparse) return;
  const SparseTensor& st = *item.sparse;
  if (ValuelessEntries(st)) return;  // ToTensor() would read values that are not stored
  int64_t size = 1;
  for (int64_t s : st.shape()) {
    if (__builtin_mul_overflow(size, s, &size) || size > (1 << 22)) return;
  }
  Entries e;
  std::string itype;
  int64_t nnz;
  CollectItem(item, &e, &itype, &nnz);
  auto sparse_strings = NonZeroEntryStrings(e);
  if (std::adjacent_find(sparse_strings.begin(), sparse_strings.end(),
                         [&](const std::string& a, const std::string& b) {
                           return a.substr(0, a.rfind(',')) == b.substr(0, b.rfind(','));
                         }) != sparse_strings.end()) {
    return;  // duplicate coordinates: ToTensor semantics differ
  }
  if (st.format_id() == arrow::SparseTensorFormat::COO) {
    // libarrow's COO ToTensor() ignores the coordinate tensor's strides (it assumes
    // row-major coordinates), so it can only be used as a reference for row-major ones.
    const auto& coords = static_cast<const arrow::SparseCOOIndex&>(*st.sparse_index()).indices();
    if (!coords->is_row_major()) return;
  }
  std::shared_ptr<SparseTensor> to_convert = item.sparse;
  if (st.format_id() == arrow::SparseTensorFormat::CSF) {
    to_convert = RepairCSF(item.sparse, item.body_buffer);
  }
  auto dense = Unwrap(to_convert->ToTensor(), where + ": ToTensor");
  Entries d;
  d.ndim = dense->ndim();
  d.value_type = dense->type_id();
  CollectDense(*dense, &d);
  if (NonZeroEntryStrings(d) != sparse_strings) {
    Fail(where + ": index walk disagrees with libarrow ToTensor()");
  }
}

int CmdGolden(const std::string& dir) {
  {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) Fail("cannot create " + dir + ": " + ec.message());
  }
  for (const Golden& g : GoldenSet()) {
    const std::string arrow_path = dir + "/" + g.name + ".arrow";
    const std::string jsonl_path = dir + "/" + g.name + ".jsonl";
    {
      auto out = Unwrap(arrow::io::FileOutputStream::Open(arrow_path), "open " + arrow_path);
      g_remove_on_failure = arrow_path;
      for (const Item& item : g.items) WriteItem(item, out.get(), "write " + arrow_path);
      FinishStream(out, arrow_path);
    }
    ForEachMessage(arrow_path, [&](const Item& item, const std::string& where) {
      CrossCheck(item, where);
    });
    std::FILE* f = std::fopen(jsonl_path.c_str(), "wb");
    if (!f) Fail("cannot open " + jsonl_path);
    DumpFile(arrow_path, f);
    if (std::fclose(f) != 0) Fail("cannot write " + jsonl_path);
    g_remove_on_failure.clear();
  }
  const std::string readme = dir + "/README.md";
  std::FILE* f = std::fopen(readme.c_str(), "wb");
  if (!f) Fail("cannot open " + readme);
  std::fputs(kGoldenReadme, f);
  if (std::fclose(f) != 0) Fail("cannot write " + readme);
  return 0;
}

// ------------------------------------------------------------------ bench

int CmdBenchCsr(const std::string& path, const std::string& iters_str) {
  int64_t iters = 0;
  {
    auto r = std::from_chars(iters_str.data(), iters_str.data() + iters_str.size(), iters);
    if (r.ec != std::errc() || r.ptr != iters_str.data() + iters_str.size() || iters < 1) {
      Fail("ITERS must be a positive integer");
    }
  }
  // Read the message once into memory.
  std::shared_ptr<SparseTensor> st;
  std::shared_ptr<Buffer> keep_body;
  int64_t count = 0;
  ForEachMessage(path, [&](const Item& item, const std::string& where) {
    if (++count > 1) Fail(path + ": more than one message");
    if (!item.sparse || item.sparse->format_id() != arrow::SparseTensorFormat::CSR) {
      Fail(where + ": not a CSR SparseTensor message");
    }
    st = item.sparse;
    keep_body = item.body_buffer;
  });
  if (!st) Fail(path + ": no message");
  const auto& ix = static_cast<const arrow::SparseCSRIndex&>(*st->sparse_index());
  const int64_t index_bytes = ix.indptr()->size() * ix.indptr()->type()->byte_width() +
                              ix.indices()->size() * ix.indices()->type()->byte_width();

  // Message size, via a counting stream.
  int64_t bytes = 0;
  {
    arrow::io::MockOutputStream mock;
    WriteSparse(*st, &mock, "write");
    bytes = mock.GetExtentBytesWritten();
  }
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };

  // (a) WriteSparseTensor into a preallocated buffer (rewound between iterations).
  auto target = std::shared_ptr<Buffer>(Unwrap(arrow::AllocateBuffer(bytes), "allocate"));
  std::memset(target->mutable_data(), 0, bytes);  // fault the pages in
  arrow::io::FixedSizeBufferWriter writer(target);
  writer.set_memcopy_threads(1);
  double best_write = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < iters; ++i) {
    Check(writer.Seek(0), "seek");
    auto t0 = Clock::now();
    WriteSparse(*st, &writer, "write");
    auto t1 = Clock::now();
    best_write = std::min(best_write, seconds(t1 - t0));
  }

  // (b) zero-copy read: MemoryMappedFile::Open + MessageReader + ReadSparseTensor.
  double best_read = std::numeric_limits<double>::infinity();
  int64_t sink = 0;
  for (int64_t i = 0; i < iters; ++i) {
    auto t0 = Clock::now();
    auto file = Unwrap(arrow::io::MemoryMappedFile::Open(path, arrow::io::FileMode::READ), "mmap");
    auto reader = arrow::ipc::MessageReader::Open(file.get());
    auto msg = Unwrap(reader->ReadNextMessage(), "read message");
    if (!msg) Fail(path + ": no message");
    auto rt = Unwrap(arrow::ipc::ReadSparseTensor(*msg), "ReadSparseTensor");
    sink += rt->non_zero_length();
    auto t1 = Clock::now();
    best_read = std::min(best_read, seconds(t1 - t0));
    rt.reset();
    msg.reset();
    reader.reset();
    Check(file->Close(), "close");
  }
  if (sink < 0) std::puts("");  // keep the reads observable

  std::string out = "{\"bytes\":";
  AppendInt(out, bytes);
  out += ",\"index_bytes\":";
  AppendInt(out, index_bytes);
  out += ",\"write_s\":";
  AppendFloat(out, best_write);
  out += ",\"mmap_read_s\":";
  AppendFloat(out, best_read);
  out += "}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

// bench-convert FILE ITERS [FORMAT INDEX_TYPE]: FILE holds one dense float64 Tensor
// message. Times the dense -> sparse conversions SparseCOOTensor::Make,
// SparseCSRMatrix::Make (2-D only) and SparseCSFTensor::Make with int32 and int64
// indices (or only FORMAT with INDEX_TYPE), best of ITERS each (one thread;
// destroying the result is not timed), and prints one JSON object:
// {"ndim":..,"size":..,"nnz":..,"coo_int32_s":..,"coo_int64_s":..,["csr_int32_s":..,
// "csr_int64_s":..,]"csf_int32_s":..,"csf_int64_s":..,"csf_axis_order":[..]}.
int CmdBenchConvert(const std::string& path, const std::string& iters_str,
                    const std::string& only_format = "", const std::string& only_itype = "") {
  int64_t iters = 0;
  {
    auto r = std::from_chars(iters_str.data(), iters_str.data() + iters_str.size(), iters);
    if (r.ec != std::errc() || r.ptr != iters_str.data() + iters_str.size() || iters < 1) {
      Fail("ITERS must be a positive integer");
    }
  }
  std::shared_ptr<Tensor> dense;
  int64_t count = 0;
  ForEachMessage(path, [&](const Item& item, const std::string& where) {
    if (++count > 1) Fail(path + ": more than one message");
    if (!item.dense || item.dense->type_id() != arrow::Type::DOUBLE) {
      Fail(where + ": not a float64 Tensor message");
    }
    dense = item.dense;
  });
  if (!dense) Fail(path + ": no message");
  const Tensor& t = *dense;
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  int64_t nnz = -1;
  std::vector<int64_t> csf_order;
  std::string out = "{\"ndim\":";
  AppendInt(out, static_cast<int64_t>(t.ndim()));
  out += ",\"size\":";
  AppendInt(out, t.size());
  std::string times;
  if (!only_format.empty() && only_format != "coo" && only_format != "csr" &&
      only_format != "csf") {
    Fail("unknown sparse format '" + only_format + "' (expected coo, csr or csf)");
  }
  if (!only_itype.empty()) IndexTypeFromName(only_itype);
  for (const std::string format : {"coo", "csr", "csf"}) {
    if (format == "csr" && t.ndim() != 2) continue;
    if (!only_format.empty() && format != only_format) continue;
    for (const std::string itype : {"int32", "int64"}) {
      if (!only_itype.empty() && itype != only_itype) continue;
      auto type = IndexTypeFromName(itype);
      double best = std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < iters; ++i) {
        auto t0 = Clock::now();
        auto st = FromDense(t, format, type);
        auto t1 = Clock::now();
        best = std::min(best, seconds(t1 - t0));
        if (nnz >= 0 && st->non_zero_length() != nnz) Fail(format + ": nnz differs");
        nnz = st->non_zero_length();
        if (format == "csf" && csf_order.empty()) {
          csf_order = static_cast<const arrow::SparseCSFIndex&>(*st->sparse_index()).axis_order();
        }
      }
      times += ",\"" + format + "_" + itype + "_s\":";
      AppendFloat(times, best);
    }
  }
  out += ",\"nnz\":";
  AppendInt(out, nnz);
  out += times;
  out += ",\"csf_axis_order\":[";
  for (size_t i = 0; i < csf_order.size(); ++i) {
    if (i) out += ",";
    AppendInt(out, csf_order[i]);
  }
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

// ------------------------------------------------------------------ main

const char* kUsage =
    "usage: arrow-sparse-peer dump FILE | rewrite IN OUT | "
    "from-dense IN OUT coo|csr|csc|csf INDEX_TYPE | golden DIR | bench-csr FILE ITERS | "
    "bench-convert FILE ITERS [coo|csr|csf int32|int64]";

int Run(int argc, char** argv) {
  if (argc < 2) Fail(kUsage);
  const std::string cmd = argv[1];
  auto need = [&](int n) {
    if (argc != n + 2) Fail(kUsage);
  };
  if (cmd == "dump") {
    need(1);
    DumpFile(argv[2], stdout);
    if (std::fflush(stdout) != 0) Fail("write failed");
    return 0;
  }
  if (cmd == "rewrite") {
    need(2);
    return CmdRewrite(argv[2], argv[3]);
  }
  if (cmd == "from-dense") {
    need(4);
    return CmdFromDense(argv[2], argv[3], argv[4], argv[5]);
  }
  if (cmd == "golden") {
    need(1);
    return CmdGolden(argv[2]);
  }
  if (cmd == "bench-csr") {
    need(2);
    return CmdBenchCsr(argv[2], argv[3]);
  }
  if (cmd == "bench-convert") {
    if (argc == 6) return CmdBenchConvert(argv[2], argv[3], argv[4], argv[5]);
    need(2);
    return CmdBenchConvert(argv[2], argv[3]);
  }
  Fail(kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    Fail(std::string("exception: ") + e.what());
  } catch (...) {
    Fail("unknown exception");
  }
}
