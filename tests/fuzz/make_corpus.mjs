// make_corpus.mjs - (re)writes the seed corpora and dictionaries of the
// libFuzzer harnesses in tests/fuzz/ from the project's own messages: the
// golden vectors (protocol/golden/), the README's curl bodies, the
// robustness tests' bad messages, and shapes a byte-level mutator rarely
// builds by itself (a key given twice with a full map each time, maps as
// long as the parameter list, containers where scalars belong, NaN, 1e300).
//
//   node tests/fuzz/make_corpus.mjs      (needs tests/server's node_modules)
//
// Files are named by content, so running it again changes nothing unless the
// inputs changed.  The generated files are kept in the repo.
import { readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(join(root, 'tests', 'server', 'package.json'));
const { encode } = require('@msgpack/msgpack');

// The material parameters (server/sim/params.c, the order of fs_param).
const PARAMS = ('rest_density stiffness near_stiffness viscosity_linear viscosity_quadratic springs spring_add ' +
  'spring_stiffness plasticity yield_stretch yield_compress spring_break friction mass_density stick_distance ' +
  'stick_strength heat_diffusivity phase_change solid_point melt_point kinematic_viscosity surface_tension ' +
  'young_modulus poisson_ratio solid_viscosity rigid elastic_limit plastic_limit fracture_stretch').split(' ');
// cmd_field_defs (server/wire/validate.c).
const FIELDS = ('type rid point direction radius strength material param value params name particles steps slot ' +
  'enabled pos speed rate cap visible token offset limit id shape size rot vel ang_vel density static friction ' +
  'impulse target solver duration kind temperature').split(' ');
const COMMANDS = ('push set_param load_scene set_solver heat get_snapshot heater pause resume step emitter cursor ' +
  'auth get_particles body_create body_destroy body_impulse body_grab body_drag body_release get_bodies').split(' ');

function put(dir, bytes) {
  mkdirSync(dir, { recursive: true });
  const b = Buffer.from(bytes);
  writeFileSync(join(dir, createHash('sha1').update(b).digest('hex').slice(0, 16)), b);
}

// msgpack map with keys in the given order, duplicates allowed: [[k, v], ...]
function mapOf(pairs) {
  const n = pairs.length;
  const head = n < 16 ? Buffer.from([0x80 | n]) : Buffer.from([0xde, n >> 8, n & 0xff]);
  return Buffer.concat([head, ...pairs.map(([k, v]) => Buffer.concat([Buffer.from(encode(k)), Buffer.isBuffer(v) ? v : Buffer.from(encode(v))]))]);
}
const f64 = (x) => { const b = Buffer.alloc(9); b[0] = 0xcb; b.writeDoubleBE(x, 1); return b; };
const f32 = (x) => { const b = Buffer.alloc(5); b[0] = 0xca; b.writeFloatBE(x, 1); return b; };

const golden = JSON.parse(readFileSync(join(root, 'protocol', 'golden', 'vectors.json'), 'utf8')).vectors;
const c2s = golden.filter((v) => v.direction === 'client_to_server');

// ---- fuzz_ws_command ---------------------------------------------------------
{
  const dir = join(here, 'corpus', 'fuzz_ws_command');
  for (const f of readdirSync(join(root, 'protocol', 'golden')).filter((f) => f.startsWith('c2s_')))
    put(dir, readFileSync(join(root, 'protocol', 'golden', f)));
  for (const v of golden.filter((v) => v.direction === 'client_to_server_bad')) put(dir, Buffer.from(v.hex, 'hex'));
  // robustness.test.mjs's messages
  put(dir, [0xc1]);
  put(dir, [0x83, 0xa4, 0x74, 0x79]);
  put(dir, [0xdf, 0xff, 0xff, 0xff, 0xff]);
  put(dir, [0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]);
  put(dir, encode([1, 2, 3]));
  put(dir, Buffer.concat([Buffer.from([0x81, 0xa1, 0x7a]), Buffer.alloc(40, 0x91), Buffer.from([0xc0])]));
  put(dir, encode({ type: 'push', rid: 12, point: 'here', radius: 1, strength: 1, direction: [0, 1, 0] }));
  put(dir, encode({ type: 'set_param', rid: 15, material: 'water', param: 'stiffness', value: NaN }));
  put(dir, encode({ type: 'pause', rid: 16, please: true }));
  // set_param with params: every parameter, one short, one over; the issue's
  // shape (params twice, 29 entries each) and a key given twice of each type.
  const all = PARAMS.map((p, i) => [p, i / 10]);
  const base = [['type', 'set_param'], ['rid', 7], ['material', 'water']];
  put(dir, mapOf([...base, ['params', mapOf(all)]]));
  put(dir, mapOf([...base, ['params', mapOf(all.slice(0, 13))]]));
  put(dir, mapOf([...base, ['params', mapOf([...all, ['stiffness', 1]])]]));
  const p29 = mapOf(Array.from({ length: 29 }, (_, i) => [`p${String(i).padStart(2, '0')}`, f64(1)]));
  put(dir, mapOf([...base, ['params', p29], ['params', p29]]));
  put(dir, mapOf([...base, ['params', mapOf(all)], ['params', mapOf(all)], ['params', mapOf(all)]]));
  put(dir, mapOf([...base, ['params', mapOf([['stiffness', 1], ['stiffness', 2]])]]));
  put(dir, mapOf([...base, ['params', mapOf([[1, 2]])]]));
  put(dir, mapOf([...base, ['params', mapOf([['stiffness', mapOf([['stiffness', 1]])]])]]));
  for (const v of c2s) {
    const pairs = Object.entries(v.input);
    for (const [k, val] of pairs.filter(([k]) => k !== 'type').slice(0, 3)) {
      put(dir, mapOf([...pairs, [k, val]])); // given twice
      put(dir, mapOf(pairs.map(([k2, v2]) => [k2, k2 === k ? mapOf([['rid', 9], ['type', 'pause']]) : v2]))); // a map where a value belongs
      put(dir, mapOf(pairs.map(([k2, v2]) => [k2, k2 === k ? f64(NaN) : v2])));
      put(dir, mapOf(pairs.map(([k2, v2]) => [k2, k2 === k ? f64(1e300) : v2])));
      put(dir, mapOf(pairs.map(([k2, v2]) => [k2, k2 === k ? f32(Infinity) : v2])));
    }
  }
  // Dictionary: keys and commands as msgpack strings, whole key/value pairs,
  // container headers of every width, special numbers.
  const q = (b) => '"' + [...Buffer.from(b)].map((x) => '\\x' + x.toString(16).padStart(2, '0')).join('') + '"';
  const lines = ['# fuzz_ws_command: msgpack pieces of client commands (tests/fuzz/make_corpus.mjs writes this)'];
  for (const k of FIELDS) lines.push(`key_${k}=${q(encode(k))}`);
  for (const c of COMMANDS) lines.push(`cmd_${c}=${q(encode(c))}`);
  for (const p of PARAMS) lines.push(`param_${p}=${q(encode(p))}`);
  for (const c of COMMANDS) lines.push(`pair_type_${c}=${q(Buffer.concat([encode('type'), encode(c)]))}`);
  lines.push(`pair_rid=${q(Buffer.concat([encode('rid'), encode(1)]))}`);
  lines.push(`pair_material=${q(Buffer.concat([encode('material'), encode('water')]))}`);
  lines.push(`pair_params_full=${q(Buffer.concat([encode('params'), mapOf(all)]))}`);
  lines.push(`pair_params_p29=${q(Buffer.concat([encode('params'), p29]))}`);
  lines.push(`pair_point=${q(Buffer.concat([encode('point'), encode([0.5, 0.5, 0.5])]))}`);
  lines.push(`pair_rot=${q(Buffer.concat([encode('rot'), encode([1, 0, 0, 0])]))}`);
  for (let n = 1; n <= 15; n++) lines.push(`map${n}=${q([0x80 | n])}`);
  for (const n of [16, 29, 30, 38, 39, 255, 65535]) lines.push(`map16_${n}=${q([0xde, n >> 8, n & 0xff])}`);
  lines.push(`map32=${q([0xdf, 0, 0, 0, 30])}`);
  for (let n = 0; n <= 5; n++) lines.push(`array${n}=${q([0x90 | n])}`);
  lines.push(`array16_3=${q([0xdc, 0, 3])}`, `array32_4=${q([0xdd, 0, 0, 0, 4])}`);
  lines.push(`nil=${q([0xc0])}`, `false=${q([0xc2])}`, `true=${q([0xc3])}`);
  for (const [n, x] of [['nan', NaN], ['inf', Infinity], ['ninf', -Infinity], ['big', 1e300], ['tiny', 5e-324],
    ['fltmax', 3.5e38], ['u32max', 4294967295], ['u32over', 4294967296], ['half', 0.5], ['neg', -1]])
    lines.push(`f64_${n}=${q(f64(x))}`);
  lines.push(`f32_nan=${q(f32(NaN))}`, `f32_inf=${q(f32(Infinity))}`);
  lines.push(`u64max=${q([0xcf, 255, 255, 255, 255, 255, 255, 255, 255])}`, `i64min=${q([0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0])}`);
  lines.push(`u32=${q([0xce, 255, 255, 255, 255])}`, `i8=${q([0xd0, 0x80])}`, `negfix=${q([0xff])}`);
  lines.push(`str8=${q([0xd9, 31])}`, `str8_32=${q([0xd9, 32])}`, `str16=${q([0xda, 0, 128])}`, `str32=${q([0xdb, 0, 0, 0, 127])}`);
  lines.push(`bin8=${q([0xc4, 4])}`, `ext8=${q([0xc7, 1, 1])}`, `fixext1=${q([0xd4, 1])}`, `never=${q([0xc1])}`);
  writeFileSync(join(here, 'fuzz_ws_command.dict'), lines.join('\n') + '\n');
}

// ---- fuzz_rest ----------------------------------------------------------------
// Route indices of fuzz_rest.c's routes[] table.
const R = { index: 0, health: 1, stats: 2, scenes: 3, materials: 4, particles: 5, clients: 6, solvers: 7,
  scene: 8, pause: 9, resume: 10, step: 11, push: 12, emitter: 13, solver: 14, heat: 15, heater: 16,
  bodies_get: 17, bodies_post: 18, body_delete: 19, body_impulse: 20, material_patch: 21, snapshot_get: 22,
  snapshot_post: 23, metrics: 24, free_get: 25, free_post: 26, recordings_get: 27, recordings_post: 28, recfile: 29 };
const restInput = (route, { method = 0, param = '', query = '', body = '' } = {}) =>
  Buffer.concat([Buffer.from([route, method]), Buffer.from(`${param}\n${query}\n`), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
{
  const dir = join(here, 'corpus', 'fuzz_rest');
  // README's curl calls
  put(dir, restInput(R.stats));
  put(dir, restInput(R.scene, { body: '{"name": "floating", "particles": 20000}' }));
  put(dir, restInput(R.material_patch, { param: 'water', body: '{"viscosity_linear": 4}' }));
  put(dir, restInput(R.push, { body: '{"point": [1,0.5,1], "radius": 0.5, "strength": 5, "direction": [1,0,0]}' }));
  put(dir, restInput(R.heat, { body: '{"point": [1,0.5,1], "radius": 0.4, "rate": 200, "duration": 2}' }));
  put(dir, restInput(R.solver, { body: '{"name": "clavet"}' }));
  put(dir, restInput(R.particles, { query: 'offset=0&limit=10' }));
  put(dir, restInput(R.snapshot_get));
  put(dir, restInput(R.metrics));
  // every route bare, and with the wrong method
  for (const r of Object.values(R)) { put(dir, restInput(r)); put(dir, restInput(r, { method: 0x80 | (r % 7) })); }
  // the golden commands as REST bodies
  const route = { push: R.push, load_scene: R.scene, set_solver: R.solver, heat: R.heat, heater: R.heater,
    step: R.step, emitter: R.emitter, body_create: R.bodies_post, pause: R.pause, resume: R.resume };
  for (const v of c2s) {
    const { type, rid, id, ...rest } = v.input;
    if (type === 'set_param') {
      const params = rest.params || { [rest.param]: rest.value };
      put(dir, restInput(R.material_patch, { param: rest.material, body: JSON.stringify(params) }));
    } else if (type === 'body_impulse') {
      put(dir, restInput(R.body_impulse, { param: String(id), body: JSON.stringify(rest) }));
    } else if (type === 'body_destroy') {
      put(dir, restInput(R.body_delete, { param: String(id) }));
    } else if (route[type] !== undefined) {
      const body = JSON.stringify(rest);
      put(dir, restInput(route[type], { body }));
      // a key given twice
      const k = Object.keys(rest)[0];
      if (k) put(dir, restInput(route[type], { body: body.replace(/}$/, `,"${k}":${JSON.stringify(rest[k])}}`) }));
    }
  }
  // the hardening report: PATCH with an unknown key (use-after-free), too many, twice
  put(dir, restInput(R.material_patch, { param: 'water', body: '{"bogus":1}' }));
  put(dir, restInput(R.material_patch, { param: 'water', body: '{"stiffness":"x"}' }));
  put(dir, restInput(R.material_patch, { param: 'water', body: JSON.stringify(Object.fromEntries(PARAMS.map((p) => [p, 1]))).replace(/}$/, ',"stiffness":1}') }));
  put(dir, restInput(R.material_patch, { param: 'water', body: '{"stiffness":0.01,"stiffness":0.02}' }));
  put(dir, restInput(R.material_patch, { param: 'x'.repeat(40), body: '{"stiffness":0.01}' }));
  put(dir, restInput(R.particles, { query: 'offset=99999999999&limit=-1' }));
  put(dir, restInput(R.particles, { query: `${'x'.repeat(70)}&offset=5` }));
  put(dir, restInput(R.body_delete, { param: '4294967296' }));
  put(dir, restInput(R.push, { body: '{"point":[1e999,0,0],"radius":1,"strength":1,"direction":[0,1,0]}' }));
  put(dir, restInput(R.step, { body: '{"steps":1e300}' }));
  put(dir, restInput(R.bodies_post, { body: '{"shape":"box","size":[1,1,1],"pos":[0,0,0],"rot":[1e300,1e300,0,0]}' }));
  put(dir, restInput(R.scene, { body: '[' .repeat(50) + ']'.repeat(50) }));
  put(dir, restInput(R.snapshot_post, { body: Buffer.from(encode({ type: 'snapshot', version: 1, world: new Uint8Array(16) })) }));
  // recordings: the listing's page, starts with their bounds, a NUL in a name, files
  put(dir, restInput(R.recordings_get, { query: 'offset=1000&limit=37' }));
  put(dir, restInput(R.recordings_get, { query: 'limit=1001' }));
  put(dir, restInput(R.recordings_post, { body: '{"name":"dam","max_mb":200,"max_seconds":60}' }));
  put(dir, restInput(R.recordings_post, { body: '{"name":"a\\u0000b","max_mb":1e-7}' }));
  put(dir, restInput(R.recordings_post, { body: Buffer.from('{"name":"a\0b"}') }));
  put(dir, restInput(R.recfile, { param: 'dam/seg-000001.fsrec' }));
  put(dir, restInput(R.recfile, { param: 'dam/index.json' }));
  const lines = ['# fuzz_rest: JSON pieces of REST bodies (tests/fuzz/make_corpus.mjs writes this)'];
  for (const k of FIELDS) lines.push(`key_${k}="\\"${k}\\":"`);
  for (const p of PARAMS) lines.push(`param_${p}="\\"${p}\\":"`);
  for (const [n, v] of [['vec3', '[1,2,3]'], ['vec4', '[1,0,0,0]'], ['obj', '{}'], ['arr', '[]'], ['true', 'true'],
    ['false', 'false'], ['null', 'null'], ['big', '1e999'], ['nbig', '-1e999'], ['tiny', '4.9e-324'], ['neg0', '-0'],
    ['u32', '4294967295'], ['u32o', '4294967296'], ['str', '"water"'], ['nul', '"\\\\u0000"'], ['esc', '"\\\\ud800"'],
    ['box', '"box"'], ['floor', '"floor"'], ['clavet', '"clavet"'], ['comma', ','], ['amp', '&'], ['offset', 'offset='],
    ['limit', 'limit=']])
    lines.push(`${n}="${v.replace(/"/g, '\\"')}"`);
  writeFileSync(join(here, 'fuzz_rest.dict'), lines.join('\n') + '\n');
}

// ---- fuzz_config ---------------------------------------------------------------
const OPTS = ('port bind scene particles capacity tick-hz frame-hz max-clients web-root token allow-origin threads ' +
  'substeps rate burst net-nice log-level data-dir save-interval').split(' ');
const envName = (o) => 'FLUID_' + o.toUpperCase().replace(/-/g, '_');
{
  const dir = join(here, 'corpus', 'fuzz_config');
  const cfg = (nenv, strings) => Buffer.concat([Buffer.from([nenv]), Buffer.from(strings.join('\0'))]);
  put(dir, cfg(0, []));
  put(dir, cfg(0, ['--help']));
  put(dir, cfg(0, ['--quiet', '--port', '0', '--bind', '127.0.0.1']));
  put(dir, cfg(0, ['--port=8080', '--tick-hz=120', '--frame-hz', '30', '--substeps', '4', '--log-level=debug']));
  put(dir, cfg(0, ['--token', 's3cret', '--allow-origin', 'https://a.example, https://b.example', '--data-dir', '/data']));
  put(dir, cfg(2, ['FLUID_PORT=9000', 'FLUID_TOKEN=abc', '--tick-hz', '60']));
  put(dir, cfg(3, ['FLUID_THREADS=0', 'FLUID_RATE=5', 'FLUID_BURST=1', '--save-interval', '0']));
  put(dir, cfg(1, ['FLUID_LOG_LEVEL=verbose']));
  put(dir, cfg(0, ['--port', '65536']));
  put(dir, cfg(0, ['--tick-hz', 'nan']));
  put(dir, cfg(0, ['--frame-hz', '1e309']));
  put(dir, cfg(0, ['--particles', '99999999999999999999']));
  put(dir, cfg(0, ['--bind', 'x'.repeat(70)]));
  put(dir, cfg(0, ['--scene']));
  put(dir, cfg(0, ['--nope', '1']));
  put(dir, cfg(0, ['stray']));
  const lines = ['# fuzz_config: options, variables and awkward values (tests/fuzz/make_corpus.mjs writes this)'];
  for (const o of OPTS) lines.push(`opt_${o.replace(/-/g, '_')}="--${o}"`, `env_${o.replace(/-/g, '_')}="${envName(o)}="`);
  lines.push('help="--help"', 'quiet="--quiet"', 'h="-h"', 'eq="="', 'nul="\\x00"');
  for (const [n, v] of [['nan', 'nan'], ['inf', 'inf'], ['big', '1e309'], ['neg', '-1'], ['hex', '0x10'], ['i32o', '2147483648'],
    ['l64o', '99999999999999999999'], ['space', ' 1'], ['debug', 'debug'], ['star', '*']])
    lines.push(`${n}="${v}"`);
  writeFileSync(join(here, 'fuzz_config.dict'), lines.join('\n') + '\n');
}
console.log('corpora and dictionaries written under', here);
