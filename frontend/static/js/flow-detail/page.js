// What every section of the flow page shares: the flow's id and the tiles at the top.
export const id = document.getElementById("flow").dataset.id;

export function setTile(name, value, sub) {
  const tile = document.querySelector(`[data-tile="${name}"]`);
  tile.querySelector(".value").textContent = value;
  if (sub !== undefined) tile.querySelector(".sub").textContent = sub;
}
