// shaders.js - GLSL ES 3.00 sources.

const HEAD = `#version 300 es
precision highp float;
precision highp int;
`;

// Instanced sphere impostors.  Positions arrive as the frames' uint16
// triples, bound as normalised attributes (0..1 of the box), and are
// dequantized and interpolated here.
export const PARTICLE_VS = HEAD + `
layout(location = 0) in vec3 aPrev;
layout(location = 1) in vec3 aCur;
uniform highp usampler2D uMatTex;   // material index per particle, row-major, MAT_W wide
uniform highp usampler2D uTempPrev, uTempCur;   // temperature byte per particle, same layout
uniform sampler2D uTempLut;         // 256 x 1: the colour of each temperature byte
uniform mat4 uView, uProj;
uniform vec3 uMin, uSize;
uniform float uAlpha, uRadius, uInvDt, uSpeedMax;
uniform float uPixelScale;   // viewport pixels per unit of x/z (proj[5] * height / 2)
uniform int uColorMode;      // 0 material, 1 speed, 2 temperature
uniform vec3 uMatColor[8];
out vec3 vCenter;
out vec3 vColor;

vec3 ramp(float t) {           // speed: deep blue, cyan, yellow, white
  t = clamp(t, 0.0, 1.0);
  vec3 a = vec3(0.10, 0.20, 0.60), b = vec3(0.10, 0.75, 0.95), c = vec3(1.0, 0.85, 0.25), d = vec3(1.0, 0.97, 0.92);
  if (t < 0.33) return mix(a, b, t / 0.33);
  if (t < 0.66) return mix(b, c, (t - 0.33) / 0.33);
  return mix(c, d, (t - 0.66) / 0.34);
}

void main() {
  vec3 p0 = uMin + aPrev * uSize, p1 = uMin + aCur * uSize;
  vec3 p = mix(p0, p1, uAlpha);
  vec4 cv = uView * vec4(p, 1.0);
  vCenter = cv.xyz;
  if (uColorMode == 1) vColor = ramp(length(p1 - p0) * uInvDt / uSpeedMax);
  else if (uColorMode == 2) {
    int w = textureSize(uTempCur, 0).x;
    ivec2 ij = ivec2(gl_VertexID % w, gl_VertexID / w);
    float t = mix(float(texelFetch(uTempPrev, ij, 0).r), float(texelFetch(uTempCur, ij, 0).r), uAlpha);
    vColor = textureLod(uTempLut, vec2((t + 0.5) / 256.0, 0.5), 0.0).rgb;
  } else {
    int w = textureSize(uMatTex, 0).x;
    uint m = texelFetch(uMatTex, ivec2(gl_VertexID % w, gl_VertexID / w), 0).r;
    vColor = uMatColor[min(m, 7u)];
  }
  gl_Position = uProj * cv;
  // A square point sprite covering the sphere's quad (1.3 r, so that the
  // perspective silhouette fits) in the plane through its centre.
  gl_PointSize = cv.z < -1e-4 ? 2.0 * uRadius * 1.3 * uPixelScale / -cv.z : 0.0;
}
`;

// Ray-sphere intersection per fragment, in view space (the eye at the origin).
function sphereHit(sprite) {
  return `
uniform mat4 uProj;
uniform float uRadius;
in vec3 vCenter;
${sprite ? '' : 'in vec3 vQuad;'}
in vec3 vColor;
bool sphereHit(out vec3 hit, out vec3 n, out float chord) {
  ${sprite ? 'vec3 vQuad = vCenter + vec3((gl_PointCoord * 2.0 - 1.0) * vec2(1.0, -1.0) * uRadius * 1.3, 0.0);' : ''}
  vec3 d = normalize(vQuad);
  float b = dot(d, vCenter);
  float c = dot(vCenter, vCenter) - uRadius * uRadius;
  float disc = b * b - c;
  if (disc < 0.0) return false;
  float s = sqrt(disc);
  hit = d * (b - s);
  n = (hit - vCenter) / uRadius;
  chord = 2.0 * s;
  return true;
}
float ndcDepth(vec3 v) { vec4 clip = uProj * vec4(v, 1.0); return clip.z / clip.w * 0.5 + 0.5; }
`;
}
const SPHERE_HIT = sphereHit(true);

export const PARTICLE_FS = HEAD + SPHERE_HIT + `
uniform vec3 uLight;     // view space, unit
uniform vec3 uUp;        // world up in view space
out vec4 oColor;
void main() {
  vec3 hit, n; float chord;
  if (!sphereHit(hit, n, chord)) discard;
  gl_FragDepth = ndcDepth(hit);
  vec3 v = -normalize(hit);
  float diff = max(dot(n, uLight), 0.0);
  float hemi = 0.5 + 0.5 * dot(n, uUp);
  vec3 h = normalize(uLight + v);
  float spec = pow(max(dot(n, h), 0.0), 40.0);
  float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0);
  vec3 col = vColor * (0.22 + 0.28 * hemi + 0.65 * diff) + vec3(0.35) * spec + vColor * 0.25 * rim;
  oColor = vec4(col, 1.0);
}
`;

// Screen-space fluid: linear depth (distance along -z) of the nearest sphere surface.
export const SSF_DEPTH_FS = HEAD + SPHERE_HIT + `
out vec4 oDepth;
void main() {
  vec3 hit, n; float chord;
  if (!sphereHit(hit, n, chord)) discard;
  gl_FragDepth = ndcDepth(hit);
  oDepth = vec4(-hit.z, 0.0, 0.0, 1.0);
}
`;

// Screen-space fluid: additive thickness, and colour weighted by it.
export const SSF_THICK_FS = HEAD + SPHERE_HIT + `
out vec4 oThick;
void main() {
  vec3 hit, n; float chord;
  if (!sphereHit(hit, n, chord)) discard;
  oThick = vec4(vColor * chord, chord);
}
`;

export const FULLSCREEN_VS = HEAD + `
out vec2 vUV;
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  vUV = p;
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
`;

// Bilateral blur of the fluid depth (0 = no fluid) over a disc of
// golden-angle spiral taps (no axis-aligned blocks, unlike a separable
// bilateral filter); the disc radius follows the projected particle size.
export const SSF_BLUR_FS = HEAD + `
uniform sampler2D uTex;
uniform vec2 uTexel;
uniform float uRot;          // spiral rotation, varied per iteration
uniform float uWorldRadius;  // blur radius in metres
uniform float uProjScale;    // pixels per metre at distance 1
uniform float uDepthFalloff; // metres
in vec2 vUV;
out vec4 o;
void main() {
  float z = texture(uTex, vUV).r;
  if (z <= 0.0) { o = vec4(0.0); return; }
  float rpx = clamp(uWorldRadius * uProjScale / z, 1.0, 32.0);
  float sigma2 = 2.0 * (0.5 * rpx) * (0.5 * rpx);
  float sum = z, wsum = 1.0;
  for (int i = 0; i < 24; i++) {
    float fi = float(i) + 0.5;
    float r = sqrt(fi / 24.0) * rpx;
    float a = fi * 2.39996323 + uRot;
    float s = texture(uTex, vUV + vec2(cos(a), sin(a)) * r * uTexel).r;
    if (s <= 0.0) continue;
    float dz = (s - z) / uDepthFalloff;
    float w = exp(-r * r / sigma2 - dz * dz);
    sum += s * w; wsum += w;
  }
  o = vec4(sum / wsum, 0.0, 0.0, 1.0);
}
`;

export const GAUSS_BLUR_FS = HEAD + `
uniform sampler2D uTex;
uniform vec2 uDir;
in vec2 vUV;
out vec4 o;
void main() {
  vec4 s = texture(uTex, vUV) * 0.227;
  s += (texture(uTex, vUV + uDir * 1.38) + texture(uTex, vUV - uDir * 1.38)) * 0.316;
  s += (texture(uTex, vUV + uDir * 3.23) + texture(uTex, vUV - uDir * 3.23)) * 0.070;
  o = s;
}
`;

// Shading of the smoothed surface: normals from depth, Fresnel mix of a sky
// reflection and the background refracted and absorbed through the thickness.
export const SSF_SHADE_FS = HEAD + `
uniform sampler2D uDepth, uThick, uScene, uSceneDepth;
uniform vec2 uTexel;
uniform vec2 uTanHalf;       // tan(fov/2) * (aspect, 1)
uniform float uShift;        // the projection's x shift (proj[8])
uniform mat4 uProj;
uniform mat3 uInvViewRot;    // view -> world rotation
uniform vec3 uLight;         // view space
in vec2 vUV;
out vec4 o;
vec3 viewPos(vec2 uv, float z) { return vec3((uv * 2.0 - 1.0 + vec2(uShift, 0.0)) * uTanHalf * z, -z); }
vec3 sky(vec3 r) {
  float t = clamp(r.y * 0.5 + 0.5, 0.0, 1.0);
  vec3 c = mix(vec3(0.16, 0.17, 0.20), vec3(0.55, 0.70, 0.90), smoothstep(0.35, 1.0, t));
  c = mix(vec3(0.08, 0.08, 0.09), c, smoothstep(0.2, 0.5, t));
  return c;
}
void main() {
  float z = texture(uDepth, vUV).r;
  vec3 scene = texture(uScene, vUV).rgb;
  if (z <= 0.0) { o = vec4(scene, 1.0); gl_FragDepth = texture(uSceneDepth, vUV).r; return; }
  vec3 p = viewPos(vUV, z);
  vec4 pc = uProj * vec4(p, 1.0);
  float fluidNdc = pc.z / pc.w * 0.5 + 0.5;
  float sceneNdc = texture(uSceneDepth, vUV).r;
  if (sceneNdc < fluidNdc) { o = vec4(scene, 1.0); gl_FragDepth = sceneNdc; return; }   // a body in front
  float zr = texture(uDepth, vUV + vec2(uTexel.x, 0.0)).r, zl = texture(uDepth, vUV - vec2(uTexel.x, 0.0)).r;
  float zu = texture(uDepth, vUV + vec2(0.0, uTexel.y)).r, zd = texture(uDepth, vUV - vec2(0.0, uTexel.y)).r;
  vec3 dx = (zr > 0.0 && (abs(zr - z) < abs(z - zl) || zl <= 0.0)) ? viewPos(vUV + vec2(uTexel.x, 0.0), zr) - p
          : (zl > 0.0 ? p - viewPos(vUV - vec2(uTexel.x, 0.0), zl) : vec3(1.0, 0.0, 0.0));
  vec3 dy = (zu > 0.0 && (abs(zu - z) < abs(z - zd) || zd <= 0.0)) ? viewPos(vUV + vec2(0.0, uTexel.y), zu) - p
          : (zd > 0.0 ? p - viewPos(vUV - vec2(0.0, uTexel.y), zd) : vec3(0.0, 1.0, 0.0));
  vec3 n = normalize(cross(dx, dy));
  vec3 v = -normalize(p);
  if (dot(n, v) < 0.0) n = -n;
  float edge = (zr <= 0.0 || zl <= 0.0 || zu <= 0.0 || zd <= 0.0) ? 0.25 : 1.0;
  vec4 th = texture(uThick, vUV);
  float thick = th.a;
  vec3 base = th.a > 1e-5 ? th.rgb / th.a : vec3(0.3, 0.55, 0.9);
  float fres = 0.02 + 0.98 * pow(1.0 - max(dot(n, v), 0.0), 5.0);
  vec3 rw = uInvViewRot * reflect(-v, n);
  vec3 refl = sky(rw);
  vec2 off = n.xy * min(thick, 0.6) * 0.05;
  vec3 behind = texture(uScene, clamp(vUV + off, 0.0, 1.0)).rgb;
  vec3 absorb = (1.0 - base) * 2.2 + 0.15;
  vec3 trans = exp(-absorb * thick * 2.0);
  float diff = max(dot(n, uLight), 0.0);
  vec3 body = base * (0.45 + 0.55 * diff);
  vec3 col = behind * trans + body * (1.0 - trans);
  col = mix(col, refl, fres * (0.4 + 0.6 * edge));
  vec3 h = normalize(uLight + v);
  // Less highlight at silhouettes and in thin spray, where the normals are least reliable.
  float conf = edge * smoothstep(0.02, 0.2, thick);
  col += vec3(1.0) * pow(max(dot(n, h), 0.0), 90.0) * 0.45 * conf;
  o = vec4(col, 1.0);
  gl_FragDepth = fluidNdc;
}
`;

// The box: its far walls from inside, with a metre / spacing grid.
export const BOX_VS = HEAD + `
layout(location = 0) in vec3 aPos;   // unit cube 0..1
uniform mat4 uViewProj;
uniform vec3 uMin, uSize;
out vec3 vWorld;
out vec3 vUnit;
void main() {
  vUnit = aPos;
  vWorld = uMin + aPos * uSize;
  gl_Position = uViewProj * vec4(vWorld, 1.0);
}
`;

export const BOX_FS = HEAD + `
uniform vec3 uMin, uSize;
uniform float uGrid;
in vec3 vWorld;
in vec3 vUnit;
out vec4 o;
float gridLine(vec2 w, float g) {
  vec2 f = abs(fract(w / g + 0.5) - 0.5) * g;
  vec2 px = fwidth(w) * 1.0;
  vec2 l = 1.0 - smoothstep(vec2(0.0), px, f);
  return max(l.x, l.y);
}
void main() {
  vec3 u = vUnit;
  // Which face: the axis where the unit coordinate is at 0 or 1.
  vec3 e = min(u, 1.0 - u);
  vec2 w; vec3 base;
  if (e.y <= e.x && e.y <= e.z) { w = vWorld.xz; base = u.y < 0.5 ? vec3(0.25, 0.27, 0.31) : vec3(0.13, 0.14, 0.16); }
  else if (e.x <= e.z) { w = vWorld.zy; base = vec3(0.17, 0.18, 0.21); }
  else { w = vWorld.xy; base = vec3(0.15, 0.16, 0.19); }
  float g = gridLine(w, uGrid) * 0.5 + gridLine(w, uGrid * 5.0) * 0.5;
  vec3 c = mix(base, base * 1.6 + 0.04, g);
  // Darken toward the floor corners a little.
  c *= 0.85 + 0.15 * smoothstep(0.0, 0.3, min(e.x, e.z) + e.y);
  o = vec4(c, 1.0);
}
`;

export const LINE_VS = HEAD + `
layout(location = 0) in vec3 aPos;
uniform mat4 uViewProj;
uniform vec3 uMin, uSize;
void main() { gl_Position = uViewProj * vec4(uMin + aPos * uSize, 1.0); }
`;
export const LINE_FS = HEAD + `
uniform vec4 uColor;
out vec4 o;
void main() { o = uColor; }
`;

// One sphere (cursors): a quad around a world point.
export const MARKER_VS = HEAD + `
uniform mat4 uView, uProj;
uniform vec3 uCenterW;
uniform float uRadius;
out vec3 vCenter;
out vec3 vQuad;
out vec3 vColor;
void main() {
  vec2 c = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1)) * 2.0 - 1.0;
  vCenter = (uView * vec4(uCenterW, 1.0)).xyz;
  vQuad = vCenter + vec3(c * uRadius * 1.3, 0.0);
  vColor = vec3(0.0);
  gl_Position = uProj * vec4(vQuad, 1.0);
}
`;

export const MARKER_FS = HEAD + sphereHit(false) + `
uniform vec4 uColor;
uniform vec3 uLight;
uniform int uRing;
out vec4 oColor;
void main() {
  vec3 hit, n; float chord;
  if (!sphereHit(hit, n, chord)) discard;
  vec3 v = -normalize(hit);
  if (uRing == 1) {
    // A translucent shell: bright at the silhouette, clear in the middle.
    float rim = pow(1.0 - max(dot(n, v), 0.0), 2.0);
    oColor = vec4(uColor.rgb, uColor.a * (0.15 + 0.85 * rim));
    gl_FragDepth = ndcDepth(hit);
    return;
  }
  gl_FragDepth = ndcDepth(hit);
  float diff = max(dot(n, uLight), 0.0);
  vec3 h = normalize(uLight + v);
  vec3 col = uColor.rgb * (0.35 + 0.75 * diff) + vec3(0.5) * pow(max(dot(n, h), 0.0), 30.0);
  oColor = vec4(col, uColor.a);
}
`;

// Rigid bodies: a unit mesh scaled, rotated and placed by uModel; a capsule
// moves its upper half up and its lower half down by uHalfLen.
export const BODY_VS = HEAD + `
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
uniform mat4 uViewProj, uModel;
uniform float uHalfLen;    // capsule: half the axis length in local units after scaling (metres / radius)
out vec3 vNormal;
out vec3 vWorld;
out vec3 vLocal;
void main() {
  vec3 p = aPos;
  if (uHalfLen > 0.0) p.y += sign(p.y) * uHalfLen;
  vLocal = p;
  vec4 w = uModel * vec4(p, 1.0);
  vWorld = w.xyz;
  vNormal = mat3(uModel) * aNormal;
  gl_Position = uViewProj * w;
}
`;

export const BODY_FS = HEAD + `
uniform vec3 uColor, uEye, uLightW;
uniform float uHeld;
uniform float uTwoSided;   // obstacles: a shell, or a mesh wound either way, lit on the side seen
in vec3 vNormal;
in vec3 vWorld;
in vec3 vLocal;
out vec4 o;
void main() {
  vec3 n = normalize(vNormal);
  vec3 v = normalize(uEye - vWorld);
  if (uTwoSided > 0.5 && dot(n, v) < 0.0) n = -n;
  float diff = max(dot(n, uLightW), 0.0);
  float hemi = 0.5 + 0.5 * n.y;
  vec3 h = normalize(uLightW + v);
  // A faint grain so rotation is visible.
  float grain = 0.92 + 0.08 * sin(vLocal.x * 9.0 + sin(vLocal.y * 5.0) * 2.0);
  vec3 c = uColor * grain * (0.25 + 0.3 * hemi + 0.6 * diff) + vec3(0.25) * pow(max(dot(n, h), 0.0), 24.0);
  float rim = pow(1.0 - max(dot(n, v), 0.0), 2.0);
  c += uHeld * rim * vec3(0.6);
  o = vec4(c, 1.0);
}
`;
