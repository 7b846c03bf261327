// The admin pages' own rules, on top of the shared sheet (auth/pages.ts). Names never break
// inside (a tool name wrapped letter by letter is unreadable); an argument breaks inside only
// when it is wider than its column can be (its column widens to the longest one first: values
// are cut short), ids anywhere rather than widen the page. Below 44rem the tables marked `cards` become one
// card per row, each cell labelled by its data-label, so a phone never scrolls sideways.

export const ADMIN_STYLE = `
h1,h2{overflow-wrap:break-word}
nav.top,nav.sections{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;margin:.5rem 0}
nav.top form{margin:0}
nav.sections a{margin:0}
.notice{border:1px solid #0b57d0;border-radius:8px;padding:.5rem .75rem;background:#eef4ff}
.alert{border:1px solid #b3261e;border-radius:8px;padding:.5rem .75rem;background:#fdecea}
.bad{color:#b3261e}
.scroll{overflow-x:auto;max-width:100%}
.nowrap,td.tool code,td.tool{white-space:nowrap}
td.id code{overflow-wrap:anywhere}
td.args code{overflow-wrap:break-word;max-width:100%;box-sizing:border-box}
td.who{overflow-wrap:break-word}
td.args{min-width:14rem}
td.args code{display:inline-block;margin:0 .35rem .15rem 0;padding:0 .2rem;background:#f4f4f4;border-radius:3px}
td.guest small{display:block}
td form{margin:0}
div.actions{align-items:center}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0 0 .5rem;overflow-wrap:anywhere}
td button{padding:.3rem .7rem;font-size:.9rem}
.muted{color:#666}
fieldset{min-width:0;margin:0 0 .5rem}
fieldset label{flex:1 1 9rem}
fieldset input,fieldset select{width:100%;box-sizing:border-box;min-width:0}
fieldset button{flex:0 0 auto}
details.policy{border:1px solid #ccc;border-radius:8px;padding:.5rem .75rem}
details.policy>summary{cursor:pointer;overflow-wrap:anywhere}
details.policy pre{max-height:70vh;overflow:auto}
@media (max-width:44rem){
body{margin:1rem auto}
table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:auto}
table.cards thead{display:none}
table.cards tr{border:1px solid #ddd;border-radius:8px;margin:.6rem 0;padding:.35rem .6rem}
table.cards td{border:0;padding:.15rem 0;min-width:0}
table.cards td:empty{display:none}
table.cards td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
table.cards td.guest small{display:inline;margin-left:.35rem}
}`;
