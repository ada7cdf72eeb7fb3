// ui/on-screen.js — drawings put off while what they draw is off the screen: a chart (or any
// element) far from the window, or in a panel that is hidden, is drawn once it comes within
// MARGIN of the window (an IntersectionObserver says when), with the latest drawing asked of it.
// A drawing done at once drops the one kept, so what comes into view is never older than what
// was drawn last; flush() does the kept ones now (an export reads the chart as it should be).
  const MARGIN = 200; // px above and below the window: drawn just before it scrolls in

  const kept = new Map(); // element -> the drawing it waits for
  const drawnKeys = new WeakMap(); // element -> what its drawing was made from
  const nearNow = new WeakMap(); // element -> within MARGIN of the window, as the observer last said
  let observer = null;

  // Within MARGIN of the window and taking room (a hidden panel's element has no box). Measured
  // the first time it is asked of el, then watched: after that the observer's word, which costs
  // no layout (a drawing asked after the DOM changed would otherwise force one). The observer
  // speaks at the next frame when el comes into view: a drawing kept a frame too long runs then.
  function near(el) {
    if (nearNow.has(el)) return nearNow.get(el);
    const box = el.getBoundingClientRect();
    const is = !!(box.width || box.height) && box.bottom > -MARGIN && box.top < innerHeight + MARGIN && box.right > 0 && box.left < innerWidth;
    if (typeof IntersectionObserver === 'function') {
      observer ||= new IntersectionObserver((entries) => {
        for (const e of entries) {
          nearNow.set(e.target, e.isIntersecting);
          if (e.isIntersecting) run(e.target);
        }
      }, { rootMargin: `${MARGIN}px 0px` });
      nearNow.set(el, is);
      observer.observe(el);
    }
    return is;
  }

  function run(el) {
    const fn = kept.get(el);
    if (!fn) return;
    kept.delete(el);
    fn();
  }

  // The drawing kept for el given up (a newer one was done, or el shows what it asks already).
  function drop(el) {
    kept.delete(el);
  }

  // fn draws el from what `key` names (null: something new every time): not again if el shows
  // that key already; at once unless lazy and el is off the screen, else once el comes into view.
  function draw(el, key, fn, lazy = false) {
    if (key !== null && drawnKeys.get(el) === key) { drop(el); return; }
    const drawing = () => { drawnKeys.set(el, key); fn(); };
    if (!lazy || near(el)) {
      drop(el);
      drawing();
      return;
    }
    kept.set(el, drawing);
    if (typeof IntersectionObserver !== 'function') run(el); // nothing to say when: at once
  }

  // What el's drawing was made from forgotten (its chart went away): the next draw draws.
  function forget(el) {
    drop(el);
    drawnKeys.delete(el);
  }

  // Every kept drawing done now.
  function flush() {
    for (const el of [...kept.keys()]) run(el);
  }

  // Drawings waiting for their element to come into view.
  const waiting = () => kept.size;

export { draw, drop, forget, flush, waiting };
