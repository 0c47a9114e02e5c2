#!/usr/bin/env node
// Where a .wasm's bytes go (issue 13): its sections, and the code section's function bodies
// by name and grouped by where they come from (nlohmann, libc++ streams, embind, our engines...).
// Names need a build that keeps them: relink with --profiling-funcs (wasm-opt keeps the name
// section then; the code is otherwise what the release build ships), e.g.
//   em++ ... -Oz --profiling-funcs  (or: cmake -DKVB_WASM_PROFILING=ON, wasm/CMakeLists.txt)
// Usage: node bench/web/wasm-size.mjs FILE.wasm [--top N] [--group REGEX]
// "gz" per group is the group's bodies gzipped alone: an upper bound of what it costs in
// the whole file, which gzips across groups.
import fs from 'node:fs';
import zlib from 'node:zlib';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
if (!file) {
  console.error('usage: node bench/web/wasm-size.mjs FILE.wasm [--top N] [--group REGEX]');
  process.exit(2);
}
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const TOP = Number(opt('--top', 40));
const only = opt('--group', null);

const buf = fs.readFileSync(file);
let pos = 8;
function leb() {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = buf[pos++];
    result += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return result;
  }
}
function name() {
  const n = leb();
  const s = buf.toString('utf8', pos, pos + n);
  pos += n;
  return s;
}

const SECTION = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount', 'tag'];
const sections = [];
let importedFuncs = 0;
const bodies = []; // {index, start, size}
const names = new Map();
let dataSegments = [];
while (pos < buf.length) {
  const id = buf[pos++];
  const size = leb();
  const start = pos;
  const end = pos + size;
  let label = SECTION[id] || `id ${id}`;
  if (id === 0) label = 'custom ' + name();
  sections.push({ label, size: end - start + 1 + (start - (start - 1)) });
  sections[sections.length - 1].size = size;
  if (id === 2) {
    const n = leb();
    for (let i = 0; i < n; i++) {
      name();
      name();
      const kind = buf[pos++];
      if (kind === 0) {
        leb();
        importedFuncs++;
      } else if (kind === 1) {
        pos++;
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 3) {
        pos += 2;
      } else if (kind === 4) {
        pos++;
        leb();
      }
    }
  } else if (id === 10) {
    const n = leb();
    for (let i = 0; i < n; i++) {
      const sz = leb();
      bodies.push({ index: importedFuncs + i, start: pos, size: sz });
      pos += sz;
    }
  } else if (id === 11) {
    const n = leb();
    for (let i = 0; i < n; i++) {
      const flags = leb();
      if (flags === 2) leb();
      if (flags !== 1) {
        // init expression: i32.const N end (or global.get)
        while (buf[pos++] !== 0x0b);
      }
      const sz = leb();
      dataSegments.push({ start: pos, size: sz });
      pos += sz;
    }
  } else if (label === 'custom name') {
    while (pos < end) {
      const sub = buf[pos++];
      const subSize = leb();
      const subEnd = pos + subSize;
      if (sub === 1) {
        const n = leb();
        for (let i = 0; i < n; i++) {
          const idx = leb();
          names.set(idx, name());
        }
      }
      pos = subEnd;
    }
  }
  pos = end;
}

const gz = (b) => zlib.gzipSync(b, { level: 9 }).length;
const kb = (n) => (n / 1024).toFixed(1).padStart(7);
console.log(`${file}: ${buf.length} B, ${kb(gz(buf))} KB gzip (level 9)`);
console.log('\nsections (raw bytes):');
for (const s of sections) console.log(`  ${String(s.size).padStart(8)}  ${s.label}`);
if (!names.size) {
  console.log('\nno name section: relink with --profiling-funcs to see the functions');
  process.exit(0);
}

// First match wins: the more specific origins first.
const GROUPS = [
  ['nlohmann json', /nlohmann/],
  ['embind', /emscripten::|_embind_|embind|EmscriptenBindingInitializer|__getTypeName|BindingType|val::/],
  ['libc++ iostream/locale', /std::__2::(basic_(i|o)?stream|basic_ios|basic_streambuf|basic_stringbuf|basic_filebuf|ios_base|locale|ctype|num_put|num_get|codecvt|collate|moneypunct|money_|time_put|time_get|messages|numpunct|__num_|__money|__time|__stdinbuf|__stdoutbuf|istreambuf_iterator|ostreambuf_iterator)|__cxx_global_var_init.*ios|std::__2::ios|__stdio/],
  ['libc++ std::function/containers', /std::__2::(__function|__tree|map<|__hash|unordered_|vector<|basic_string|__split_buffer|optional|variant|__variant|pair<|tuple<|allocator|__sort|__insertion|__introsort|__partial|sort|__stable|__inplace|__merge|__floyd|__buffered|__lower_bound|__upper_bound|deque|__deque|list<|__list|set<|__shared|shared_ptr|unique_ptr|__compressed)/],
  ['libc printf/strtod/math', /^(printf_core|fmt_[a-z]+|pop_arg|out|pad|vfprintf|vsnprintf|snprintf|sn_write|__fwritex|strtod|strtof|strtold|strtoll|strtoull|strtol|strtoul|__floatscan|decfloat|hexfloat|scanexp|__shgetc|__shlim|__intscan|frexp|frexpl|fmt_fp|__lctrans.*|__strerror_l|strerror|wctomb|wcrtomb|__towrite|memchr|strnlen|__fpclassifyl|__signbitl|fmodl|scalbn|scalbnl|copysignl|__ashlti3|__lshrti3|__multf3|__addtf3|__subtf3|__divtf3|__letf2|__getf2|__unordtf2|__eqtf2|__netf2|__fixtfsi|__floatsitf|__floatunsitf|__extenddftf2|__trunctfdf2|__floatditf|__fixunstfsi|__trunctfsf2|__extendsftf2|__mulddi3|pow|log|log2|exp|exp2|ceil|floor|round|fmod|ldexp|sqrt|__cos|__sin|__rem_pio2.*|__math_.*|.*tf[23]$|.*ti3$)$/],
  ['libc/libc++abi other', /^(__cxa_|__cxxabiv1|abort_message|__dynamic_cast|std::__2::__throw|std::terminate|__gxx|operator new|operator delete|malloc|free|calloc|realloc|emmalloc|dlmalloc|dlfree|sbrk|memcpy|memmove|memset|memcmp|strlen|strcmp|strncmp|strchr|strrchr|strstr|__stpcpy|__strchrnul|__memrchr|isspace|isdigit|tolower|toupper|__errno_location|emscripten_|__wasm_|__lock|__unlock|__ofl|fflush|__stdio|__overflow|fputs|puts|fwrite|stackSave|stackRestore|stackAlloc|__lctrans|dummy|__original_main|_GLOBAL__|__cxx_global|std::exception|std::bad_|std::logic_error|std::runtime_error|std::length_error|std::out_of_range|std::invalid_argument|std::__2::__libcpp|std::__2::to_string|std::__2::__itoa|std::__2::__to_chars|std::__2::stoi|std::__2::stol|std::__2::stod|std::__2::__next_prime|std::uncaught|__funcs_on_exit|__libc_|_start|__init_|__ctor)/],
  ['GGUF reader', /kvb::(\(anonymous namespace\)::)?(.*[Gg]guf|GgufHeader|GgufValue|parse_gguf|spec_from_gguf)|gguf/i],
  ['check / log reader / lab', /kvb::(check|lab|read_engine_log|read_lab|match_catalog|LogFacts|LabRow|Check|Lab)|log_reader|lab_/],
  ['simulator', /kvb::sim|SimSession|sim_inputs|SimInputs/],
  ['JSON writer/reader (ours)', /kvb::(json|JsonWriter|to_json|.*_from_json|budget_inputs_from_json|json_)|JsonWriter|json_writer/],
  ['config reader / model', /kvb::(ConfigReader|parse_config|parse_json|ModelSpec|model|dtype|weights|rope|params|family|.*Family|string_at|bool_at|json_type_name|short_dump|non_finite)/],
  ['engines (vllm/llama.cpp/transformers)', /kvb::(vllm|llamacpp|llama|transformers|engine|Vllm|Llama|Transformers|Engine)/],
  ['budget / kv / answer', /kvb::(budget|Budget|kv|Kv|answer|Answer|compute|gpu|Gpu|fit|offload|estimate|catalog|table)/],
  ['messages / base', /kvb::(Message|message|make_error|Error|msg|format|parse_size|parse_context|units|text|Result)/],
  ['bindings (ours)', /\(anonymous namespace\)::(guarded|ok|fail|parse_config|compute|gguf_|release_model|parse_size|parse_context|format_bytes|models|find_model)/],
  ['other kvb', /kvb::/],
];
// The qualified name without its parameter list (a kvb:: function taking a std::string is ours).
function owner(nm) {
  let depth = 0;
  for (let i = 0; i < nm.length; i++) {
    const c = nm[i];
    if (c === '<') depth++;
    else if (c === '>') depth--;
    else if (c === '(' && depth === 0 && i > 0 && !nm.startsWith('(anonymous', i)) return nm.slice(0, i);
  }
  return nm;
}
const groups = new Map(GROUPS.map(([g]) => [g, { raw: 0, n: 0, chunks: [] }]));
groups.set('unnamed / other', { raw: 0, n: 0, chunks: [] });
const fns = bodies.map((b) => {
  const nm = names.get(b.index) || `func${b.index}`;
  const g = (GROUPS.find(([, re]) => re.test(owner(nm))) || ['unnamed / other'])[0];
  const e = groups.get(g);
  e.raw += b.size;
  e.n++;
  e.chunks.push(buf.subarray(b.start, b.start + b.size));
  return { name: nm, size: b.size, group: g };
});
const code = bodies.reduce((a, b) => a + b.size, 0);
const data = dataSegments.reduce((a, d) => a + d.size, 0);
console.log(`\ncode: ${bodies.length} functions, ${code} B (${kb(gz(Buffer.concat(bodies.map((b) => buf.subarray(b.start, b.start + b.size)))))} KB gz alone); data: ${data} B (${kb(gz(Buffer.concat(dataSegments.map((d) => buf.subarray(d.start, d.start + d.size)))))} KB gz alone)`);
console.log('\nby origin (raw bytes, KB gz alone, functions):');
for (const [g, e] of [...groups].sort((a, b) => b[1].raw - a[1].raw)) {
  if (!e.n) continue;
  console.log(`  ${String(e.raw).padStart(8)} ${kb(gz(Buffer.concat(e.chunks)))} KB gz ${String(e.n).padStart(5)}  ${g}`);
}
const shown = fns.filter((f) => !only || f.group.match(new RegExp(only, 'i')) || f.name.match(new RegExp(only))).sort((a, b) => b.size - a.size).slice(0, TOP);
console.log(`\ntop ${shown.length} functions${only ? ` matching ${only}` : ''}:`);
for (const f of shown) console.log(`  ${String(f.size).padStart(7)}  [${f.group}]  ${f.name.length > 160 ? f.name.slice(0, 157) + '...' : f.name}`);
