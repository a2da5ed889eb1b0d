// messages.js - what the page tells the user: the banner (connection lost,
// another protocol version, no WebGL) and short toasts (who changed what,
// refused commands).
const $ = (id) => document.getElementById(id);

export function showBanner(text, fatal) {
  const b = $('banner');
  b.textContent = text;
  b.className = `banner${fatal ? ' fatal' : ''}`;
}

export function hideBanner() { $('banner').className = 'banner hidden'; }

export function toast(text, err = false) {
  const el = document.createElement('div');
  el.className = `toast${err ? ' err' : ''}`;
  el.textContent = text;
  $('toasts').append(el);
  while ($('toasts').children.length > 5) $('toasts').firstChild.remove();
  setTimeout(() => { el.style.opacity = '0'; setTimeout(() => el.remove(), 600); }, 4000);
}
