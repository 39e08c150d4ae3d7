// The event form's type-ahead: above each long list of choices (organizers, categories,
// tags), a search field that shows only the choices whose names hold what is typed (checked
// ones stay shown). Without JavaScript every choice is listed, and the "new … by name"
// fields suggest the existing names from their lists.
for (const group of document.querySelectorAll('fieldset.choices[data-filter]')) {
  const legend = group.querySelector('legend');
  const field = document.createElement('input');
  field.type = 'search';
  field.className = 'choice-filter';
  field.setAttribute('aria-label', group.dataset.filter);
  field.placeholder = group.dataset.filter;
  const choices = [...group.querySelectorAll('.check')];
  field.addEventListener('input', () => {
    const wanted = field.value.trim().toLocaleLowerCase();
    for (const choice of choices) {
      const box = choice.querySelector('input');
      const name = choice.textContent.trim().toLocaleLowerCase();
      choice.hidden = wanted !== '' && !box.checked && !name.includes(wanted);
    }
  });
  legend.after(field);
}
