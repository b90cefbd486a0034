// What a paste's author writes where they left part of a listing out: "...", "…", "⋮", "[...]",
// "(...)", "[... 200 more ...]", "... (200 more) ...", "… (200 more) …",
// "... 40 more rows ...", "--- snip ---", "[snip]", "<omitted>", "(output truncated)", "省略", "（省略）", "以下省略",
// "中略"; and grep's "--" between the groups of lines it printed (-A/-B/-C), none of ipvsadm's,
// nft's, iptables' or Cilium's listings printing a line that is only "--". The iptables and IPVS
// readers, nft's text listing reader and Cilium's (service list, bpf lb list, db/show tables) take
// such a line for an elision (what it lists may go on past it), never for a line of the listing,
// a comment or a prompt.

/** A trimmed line by which a paste's author (or grep) left part of the listing out. */
export const ELISION =
  /^(?:\.{2,}|…+|⋮+|--|\((?:\.{3,}|…+)\)|\[(?:\.{3}|…)[^\]]*\]|(?:\.{3}|…) ?\(.*\)(?: ?(?:\.{3}|…))?|(?:\.{3}|…) ?\d+ more\b[^.…]*(?:\.{3}|…)?|[-=~#<[(.\s]*\b(?:output )?(?:snip(?:ped)?|omitted|truncated)\b[-=~#>\]).\s]*|[-=.\s(（]*(?:以下省略|省略|中略)[-=.\s)）]*)$/i;
