export default () => 1;
