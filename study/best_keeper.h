#pragma once
// --save-best K DIR, split into study/best/ (one concern a file): this header includes them all
// until each caller includes the one it needs.
#include "study/best/checks.h"
#include "study/best/names.h"
#include "study/best/publish.h"
#include "study/best/staging.h"
#include "study/best/top_k.h"
