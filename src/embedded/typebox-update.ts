// pi 1.5.2 bundles TypeBox 1.3.27, whose `Memory.Update` deep-clones the whole type it updates; `Type.Optional`
// calls it twice, and pi builds its tool, settings and theme schemas when its modules load: ~5 ms of every child's
// start (CPU profiles of cold children, 12 runs). TypeBox 1.4 copies the updated type's own properties shallowly
// (typebox/build/system/memory/update.mjs, `WithCurrent`): in TypeBox a type is an immutable value, so sharing
// its nested parts is safe. The embedded pi gets 1.4's copy in 1.3's Update.
const UPDATE_CLONE =
  /function Update\((\w+),(\w+),(\w+)\)\{(\w+)\.update\+=1;let (\w+)=(\w+)\.Get\(\),(\w+)=Clone\(\1\);/;

/** TypeBox 1.4's WithCurrent: the current type's own properties, as they are, except the keys about to be set. */
const SHALLOW = `
function __subagentsShallowType(current,hidden,enumerable){const result={},skip=new Set([...Object.keys(hidden),...Object.keys(enumerable)]);for(const key of [...Object.getOwnPropertyNames(current),...Object.getOwnPropertySymbols(current)]){if(key==="__proto__"||key==="constructor"||key==="prototype"||skip.has(key))continue;Object.defineProperty(result,key,Object.getOwnPropertyDescriptor(current,key))}return result}
`;

/** Swaps the deep clone in TypeBox 1.3's Update for the shallow copy. null when the file has no such Update. */
export function hookTypeboxUpdate(source: string): string | null {
  const m = UPDATE_CLONE.exec(source);
  if (!m) return null;
  const [all, current, hidden, enumerable] = m;
  return (
    source.replace(
      UPDATE_CLONE,
      all.replace(`Clone(${current})`, `__subagentsShallowType(${current},${hidden},${enumerable})`),
    ) + SHALLOW
  );
}
