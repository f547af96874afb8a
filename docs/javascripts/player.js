// On the site, every picture player of a lesson (viz.frames, viz.slider, viz.stepper_frames:
// a slider over pictures, see tinygrad_edu/viz/player.py) starts playing by itself, so a
// reader sees the backward pass step by step without running anything. Touching the slider
// or the pause button stops it.
function startPlayers() {
  document.querySelectorAll(".tge-player").forEach(function (player) {
    if (typeof player.tgePlay === "function") player.tgePlay();
  });
}

if (typeof document$ !== "undefined") {
  document$.subscribe(startPlayers);
} else {
  document.addEventListener("DOMContentLoaded", startPlayers);
}
