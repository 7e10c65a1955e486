// The MNIST IDX format: a big-endian header, then unsigned bytes.
//   images: magic 0x00000803, count, rows, cols, then count*rows*cols pixels
//   labels: magic 0x00000801, count, then count labels
// Files may be gzip-compressed; zlib's gz* functions recognise the gzip magic bytes (1f 8b) and
// read any other file as it is, so one code path serves both.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <zlib.h>

#include "data/dataset.h"
#include "runtime/error.h"
#include "runtime/input_file.h"

namespace mf {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
// The most pixels one file may announce; it keeps sizes within int and memory within reason,
// and a corrupt header cannot ask for more.
constexpr uint64_t kMaxPixels = std::numeric_limits<int32_t>::max();
constexpr size_t kChunkBytes = size_t(1) << 20;
// Reserved up front at most; a header that announces more must prove it with data as it is read.
constexpr size_t kMaxReserve = size_t(1) << 24;

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzPtr = std::unique_ptr<gzFile_s, GzCloser>;

// An open IDX file and its path, for the messages.
class IdxFile {
 public:
  explicit IdxFile(const std::string& path) : path_(path) {
    check_input_file(path, "IDX file", kMaxDataFileBytes);
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_)
      fail(std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  }

  [[noreturn]] void fail(const std::string& what) const { throw UserError(path_ + ": " + what); }

  // Reads up to `size` bytes; fewer only at the end of the data.
  size_t read(unsigned char* out, size_t size) {
    size_t done = 0;
    while (done < size) {
      const unsigned want = unsigned(std::min(size - done, kChunkBytes));
      const int got = gzread(file_.get(), out + done, want);
      if (got < 0) fail_read();
      if (got == 0) break;
      done += size_t(got);
    }
    return done;
  }

  // The header: the magic number, checked first so that a wrong kind of file is named as such,
  // then `dims` big-endian 32-bit sizes.
  std::vector<uint32_t> read_header(uint32_t magic, int dims, const char* kind) {
    const size_t size = 4 * size_t(dims + 1);
    unsigned char bytes[16] = {};
    const size_t got = read(bytes, 4);
    const uint32_t found = be32(bytes);
    if (got == 4 && found != magic)
      fail("wrong magic number " + hex(found) + "; an IDX " + kind + " file starts with " +
           hex(magic));
    const size_t total = got == 4 ? 4 + read(bytes + 4, size - 4) : got;
    if (total < size)
      fail("truncated header: expected " + std::to_string(size) + " bytes, found " +
           std::to_string(total) + "; an IDX " + kind + " file starts with a " +
           std::to_string(size) + "-byte header");
    std::vector<uint32_t> sizes(static_cast<size_t>(dims));
    for (int i = 0; i < dims; ++i) sizes[size_t(i)] = be32(bytes + 4 * (i + 1));
    return sizes;
  }

  // Reads exactly `count` bytes, handing them to `sink` chunk by chunk (so memory grows only with
  // data that is really there), then checks that nothing follows them.
  template <class Sink>
  void read_body(uint64_t count, const std::string& what, Sink sink) {
    std::vector<unsigned char> chunk(kChunkBytes);
    uint64_t done = 0;
    while (done < count) {
      const size_t want = size_t(std::min<uint64_t>(count - done, kChunkBytes));
      const size_t got = read(chunk.data(), want);
      sink(chunk.data(), got);
      done += got;
      if (got < want)
        fail("truncated data: expected " + std::to_string(count) + " bytes of " + what +
             ", found " + std::to_string(done) +
             (gzip_cut_short() ? " (the gzip stream ends early)" : ""));
    }
    if (read(chunk.data(), 1) != 0)
      fail("data continues after the " + std::to_string(count) + " bytes of " + what +
           " that the header announces; the header and the data disagree");
    if (gzip_cut_short())
      fail("the gzip stream ends early, after all " + std::to_string(count) + " bytes of " + what +
           " but before its checksum; the file is truncated");
  }

 private:
  static uint32_t be32(const unsigned char* b) {
    return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
  }

  static std::string hex(uint32_t value) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", unsigned(value));
    return text;
  }

  [[noreturn]] void fail_read() const {
    int code = Z_OK;
    const char* message = gzerror(file_.get(), &code);
    if (code == Z_ERRNO) fail(std::string("cannot read: ") + std::strerror(errno));
    fail(std::string("corrupt gzip data: ") + message);
  }

  // A gzip stream cut short reads like a short file; zlib notes it as Z_BUF_ERROR.
  bool gzip_cut_short() const {
    int code = Z_OK;
    gzerror(file_.get(), &code);
    return code == Z_BUF_ERROR;
  }

  std::string path_;
  GzPtr file_;
};

}  // namespace

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path) {
  IdxFile images(images_path);
  const std::vector<uint32_t> dims = images.read_header(kImagesMagic, 3, "image");
  const uint64_t count = dims[0], pixels_per_image = uint64_t(dims[1]) * dims[2];
  const std::string shape = std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
  if (count == 0) images.fail("holds no images; an IDX image file needs at least one");
  if (pixels_per_image == 0)
    images.fail("images of " + shape + " pixels; both dimensions must be positive");
  if (pixels_per_image > kMaxPixels || count > kMaxPixels / pixels_per_image)
    images.fail("header announces " + std::to_string(count) + " images of " + shape +
                " pixels, more than the " + std::to_string(kMaxPixels) +
                " pixels this reader accepts");

  IdxFile labels(labels_path);
  const uint32_t label_count = labels.read_header(kLabelsMagic, 1, "label")[0];
  if (label_count != count)
    throw UserError(images_path + ": " + std::to_string(count) + " images but " + labels_path +
                    " has " + std::to_string(label_count) +
                    " labels; every image needs exactly one label");

  Dataset data;
  data.rows = int64_t(count);
  data.features = int(pixels_per_image);
  data.target_cols = 1;
  const uint64_t total = count * pixels_per_image;
  data.x.reserve(size_t(std::min<uint64_t>(total, kMaxReserve)));
  images.read_body(total, "pixels (" + std::to_string(count) + " images of " + shape + ")",
                   [&](const unsigned char* bytes, size_t size) {
                     for (size_t i = 0; i < size; ++i) data.x.push_back(float(bytes[i]) / 255.0f);
                   });

  // The label count is known to be backed by as many images, so reserving it is safe.
  data.y.reserve(size_t(count));
  int max_label = -1;
  labels.read_body(count, "labels", [&](const unsigned char* bytes, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      if (int(bytes[i]) > max_label)
        data.label_at = labels_path + " record " + std::to_string(data.y.size()) + ": label " +
                        std::to_string(bytes[i]);
      data.y.push_back(float(bytes[i]));
      max_label = std::max(max_label, int(bytes[i]));
    }
  });
  data.classes = max_label + 1;
  return data;
}

}  // namespace mf
