function first() {
  return 1;
}
function second() {
  return 1;
}
