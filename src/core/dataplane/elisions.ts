// What a paste's author writes where they left part of a listing out: "...", "…", "[...]",
// "... (200 more) ...", "--- snip ---", "[snip]", "<omitted>", "省略". The iptables and IPVS
// readers, nft's text listing reader and Cilium's (service list, bpf lb list, db/show tables) take
// such a line for an elision (what it lists may go on past it), never for a line of the listing,
// a comment or a prompt.

/** A trimmed line by which a paste's author left part of the listing out. */
export const ELISION =
  /^(?:\.{2,}|…|\[\.\.\.\]|\.\.\. ?\(.*\)(?: ?\.\.\.)?|[-=~#<[(.\s]*\b(?:snip(?:ped)?|omitted|truncated)\b[-=~#>\]).\s]*|[-=.\s]*省略[-=.\s]*)$/i;
