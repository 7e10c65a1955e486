// --save-best's names (study/best/names.h): the ranks' staging folders, and the files of models
// whose names are no file names.
#include <string>

#include <gtest/gtest.h>

#include "study/best/names.h"

namespace mf {
namespace {

TEST(BestStagingFolder, RankZerosIsTheStagingFolderAndEveryOtherRanksItsSibling) {
  EXPECT_EQ(staging_folder(0), ".staging");
  EXPECT_EQ(staging_folder(2), ".staging.rank-2");
}

TEST(BestFileStem, APlainNameIsItsOwnAndAnyOtherIsWrittenApart) {
  EXPECT_EQ(best_file_stem("tiny-lr0.001-s1", 0), "tiny-lr0.001-s1");
  EXPECT_EQ(best_file_stem("fmnist-h100x10-relu", 3), "fmnist-h100x10-relu");
  EXPECT_EQ(best_file_stem("a/b", 0), "a%2Fb");
  EXPECT_EQ(best_file_stem("a%2Fb", 1), "a%252Fb");  // so the two stay apart
  EXPECT_EQ(best_file_stem(".staging", 0), "%2Estaging");
  EXPECT_EQ(best_file_stem("..", 0), "%2E.");
  EXPECT_EQ(best_file_stem("two words", 0), "two%20words");
  const std::string longer(300, 'x');
  EXPECT_EQ(best_file_stem(longer, 17), std::string(180, 'x') + "~17");
  EXPECT_NE(best_file_stem(longer, 17), best_file_stem(longer + "y", 18));
}

}  // namespace
}  // namespace mf
